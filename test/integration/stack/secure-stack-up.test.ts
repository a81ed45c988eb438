/**
 * `scripts/stack.sh up --secure` from a private folder, and after a failure (issue 34, item 1).
 *
 * A CI job clones into a folder only its owner may enter (mode 0700, what `mktemp -d` makes). As root, nginx's
 * workers run as `nobody` and could not open the registry's password file there: the registry never answered.
 * And a failed `up --secure` left Kafka, Apicurio, Redis and nginx running after the job. Each test runs a
 * throwaway secure stack in such a folder, on free ports of its own (beside any stack already running), reusing
 * the plaintext stack's downloads (`STACK_PLAIN_DIR`, default `<checkout>/.stack`), and checks that no process of
 * that folder is left afterwards. The first test also checks the stack's own hygiene (issue 34's stack items): no
 * password of the stack in any process's command line (every `java` the stack runs is logged through a PATH shim,
 * the storage format included) nor in a file others may read, and the KRaft controller listener on SASL with no
 * anonymous super user.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts } from '../../helpers/free-ports.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Run {
  code: number | null;
  out: string;
}

function stack(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(ROOT, 'scripts/stack.sh'), ...args, '--secure'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`stack.sh ${args.join(' ')} --secure: no exit within ${timeoutMs} ms; output:\n${out}`),
      );
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Every regular file under `dir`. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Every live process's command line. */
function allCommandLines(): string {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // exited meanwhile
    }
  }
  return lines.join('\n');
}

/** Pids of the live processes whose command line names `dir`. */
function processesNaming(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // exited meanwhile
    }
    if (cmdline.includes(dir) && !cmdline.includes('vitest')) found.push(`${pid}: ${cmdline.slice(0, 200)}`);
  }
  return found;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/** A private folder (0700) holding the stack folder, and an environment with free ports for every service. */
async function throwawayStack(): Promise<{
  dir: string;
  stackDir: string;
  env: NodeJS.ProcessEnv;
  ports: number[];
}> {
  const dir = mkdtempSync(join(tmpdir(), 'secure-stack-'));
  const stackDir = join(dir, 'checkout', '.stack-secure');
  const names = [
    'STACK_KAFKA_PORT',
    'STACK_KAFKA_CONTROLLER_PORT',
    'STACK_KAFKA_MTLS_PORT',
    'STACK_REGISTRY_PORT',
    'STACK_REGISTRY_MGMT_PORT',
    'STACK_REGISTRY_PUBLIC_PORT',
    'STACK_REDIS_PORT',
  ];
  // distinct: Kafka refuses two listeners on one port (a CI run got the controller's port twice, 2026-11-28)
  const ports = await freePorts(names.length);
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_DIR: stackDir };
  names.forEach((name, i) => (env[name] = String(ports[i])));
  env['STACK_PLAIN_DIR'] ??= join(ROOT, '.stack');
  // the client settings of a secure stack this shell may have exported would confuse the plaintext probes
  for (const key of Object.keys(env)) if (key.startsWith('GAMEDATA_')) delete env[key];
  return { dir, stackDir, env, ports };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('scripts/stack.sh up --secure', () => {
  it('starts from a folder only its owner may enter (0700) and stops everything on down', async () => {
    const { dir, stackDir, env, ports } = await throwawayStack();
    cleanups.push(async () => {
      await stack(['down'], env, 120_000);
      rmSync(dir, { recursive: true, force: true });
      rmSync(`/tmp/gamedata-nginx${dir}`, { recursive: true, force: true });
    });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // every java the stack runs (storage format, broker, ACL tool) through a shim logging its argv
    const shim = join(dir, 'shim');
    mkdirSync(shim);
    const argvLog = join(dir, 'java-argv.log');
    const java = execFileSync('bash', ['-c', 'command -v java'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(shim, 'java'),
      `#!/bin/bash\nprintf '%s\\n' "$*" >>'${argvLog}'\nexec '${java}' "$@"\n`,
    );
    chmodSync(join(shim, 'java'), 0o755);
    env['PATH'] = `${shim}:${env['PATH'] ?? ''}`;

    const up = await stack(['up'], env, 420_000);
    expect(up.out).not.toMatch(/Permission denied/);
    expect(up.code, up.out).toBe(0);
    expect(up.out).toMatch(/secure stack up in/);
    const status = await stack(['status'], env, 60_000);
    expect(status.code, status.out).toBe(0);
    expect(status.out).toMatch(/registry: up {3}https:/);

    // no password in argv: not in any java the stack ran (the storage format with its SCRAM users included), not in
    // any live process; and every file holding one is readable by its owner only
    const secretsDir = join(stackDir, 'secrets');
    const secrets = readdirSync(secretsDir).map((f) => readFileSync(join(secretsDir, f), 'utf8').trim());
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const argv = readFileSync(argvLog, 'utf8');
    expect(argv).toMatch(/@\S+format\.args/);
    expect(argv).toMatch(/kafka\.Kafka /);
    const commandLines = allCommandLines();
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(16);
      expect(argv.includes(secret), 'a password in a java argv').toBe(false);
      expect(commandLines.includes(secret), 'a password in a command line').toBe(false);
    }
    const holding = filesUnder(stackDir).filter((f) => {
      const text = readFileSync(f, 'latin1');
      return secrets.some((secret) => text.includes(secret));
    });
    expect(holding.map((f) => f.slice(stackDir.length))).toEqual(
      expect.arrayContaining(['/kafka/server.properties', '/redis/redis.conf']),
    );
    for (const f of holding)
      expect({ f: f.slice(stackDir.length), mode: (statSync(f).mode & 0o777).toString(8) }).toEqual({
        f: f.slice(stackDir.length),
        mode: '600',
      });
    // the KRaft controller listener speaks SASL over TLS; no anonymous super user
    const properties = readFileSync(join(stackDir, 'kafka', 'server.properties'), 'utf8');
    expect(properties).toMatch(/^listener\.security\.protocol\.map=CONTROLLER:SASL_SSL,/m);
    expect(properties).toMatch(/^super\.users=User:admin$/m);
    expect(properties).not.toMatch(/ANONYMOUS|CONTROLLER:PLAINTEXT/);

    const down = await stack(['down'], env, 120_000);
    expect(down.code, down.out).toBe(0);
    expect(processesNaming(stackDir)).toEqual([]);
    for (const port of ports) expect(await portAnswers(port), `port ${port}`).toBe(false);
  });

  it('a failed up stops what it started: no Kafka, registry, Redis or nginx is left', async () => {
    const { dir, stackDir, env, ports } = await throwawayStack();
    cleanups.push(async () => {
      await stack(['down'], env, 120_000);
      rmSync(dir, { recursive: true, force: true });
      rmSync(`/tmp/gamedata-nginx${dir}`, { recursive: true, force: true });
    });
    // Every service is started before the first wait; Kafka cannot start: its controller port is held here, so its
    // process exits (not a race against its start-up time: a 1 s wait once lost it on a loaded box).
    const controllerPort = Number(env['STACK_KAFKA_CONTROLLER_PORT']);
    env['STACK_KAFKA_WAIT_S'] = '60'; // should it hang rather than exit
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(controllerPort, '127.0.0.1', resolve));
    let up: Awaited<ReturnType<typeof stack>>;
    try {
      up = await stack(['up'], env, 240_000); // under the test's 300 s, so a hang shows its output
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    expect(up.code, up.out).not.toBe(0);
    expect(up.out).toMatch(/kafka: (process exited before answering|no answer within \d+s)/);
    expect(up.out).toMatch(/up failed \(exit 1\): stopping what it started: kafka registry redis nginx/);
    expect(processesNaming(stackDir)).toEqual([]);
    for (const port of ports) expect(await portAnswers(port), `port ${port}`).toBe(false);
  });
});
