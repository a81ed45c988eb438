/**
 * `scripts/stack.sh up --secure` from a private folder, and after a failure (issue 34, item 1).
 *
 * A CI job clones into a folder only its owner may enter (mode 0700, what `mktemp -d` makes). As root, nginx's
 * workers run as `nobody` and could not open the registry's password file there: the registry never answered.
 * And a failed `up --secure` left Kafka, Apicurio, Redis and nginx running after the job. Each test runs a
 * throwaway secure stack in such a folder, on free ports of its own (beside any stack already running), reusing
 * the plaintext stack's downloads (`STACK_PLAIN_DIR`, default `<checkout>/.stack`), and checks that no process of
 * that folder is left afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
  const ports: number[] = [];
  for (let i = 0; i < names.length; i += 1) ports.push(await freePort());
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

    const up = await stack(['up'], env, 420_000);
    expect(up.out).not.toMatch(/Permission denied/);
    expect(up.code, up.out).toBe(0);
    expect(up.out).toMatch(/secure stack up in/);
    const status = await stack(['status'], env, 60_000);
    expect(status.code, status.out).toBe(0);
    expect(status.out).toMatch(/registry: up {3}https:/);

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
    // every service is started before the first wait; Kafka cannot answer within one second
    env['STACK_KAFKA_WAIT_S'] = '1';

    const up = await stack(['up'], env, 300_000);
    expect(up.code, up.out).not.toBe(0);
    expect(up.out).toMatch(/kafka: no answer within 1s/);
    expect(up.out).toMatch(/up failed \(exit 1\): stopping what it started: kafka registry redis nginx/);
    expect(processesNaming(stackDir)).toEqual([]);
    for (const port of ports) expect(await portAnswers(port), `port ${port}`).toBe(false);
  });
});
