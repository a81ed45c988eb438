/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepare`), installed from the tarball into
 * an empty plain-JS Node project (dependencies from the npm cache or registry). There, a plain ESM script imports
 * `gamedata-pipeline/client` and the root and reads a page from a simulator; a TypeScript consumer type-checks
 * against the shipped declarations (with the project's tsc); the installed `gamedata --help` lists every command.
 * Then the Dockerfile's runtime stage, step by step, without a container engine (the last describe).
 */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../tools/simulator/index.js';
import { COMMANDS } from '../../../src/app/cli/command-table.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

let dir: string;
let consumer: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gamedata-pack-'));
  consumer = join(dir, 'consumer');
  const [, simulator] = await Promise.all([
    run('npm', ['pack', '--pack-destination', dir, ...NPM_FLAGS], { cwd: ROOT, maxBuffer: 1 << 26 }),
    startSimulator({ port: 0, scale: 'small', seed: 3 }),
  ]);
  sim = simulator;
  const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${dir}`);
  await run('mkdir', ['-p', consumer]);
  await writeFile(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
  );
  await run('npm', ['install', join(dir, tarball), ...NPM_FLAGS], { cwd: consumer, maxBuffer: 1 << 26 });
}, 170_000);

afterAll(async () => {
  await sim?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the packed tarball in a plain Node project', () => {
  it('imports the client and the root and reads a page from the simulator', async () => {
    await writeFile(
      join(consumer, 'read-page.mjs'),
      `import { createClient } from 'gamedata-pipeline/client';
import { RESOURCES, ConfigError } from 'gamedata-pipeline';
const client = createClient({ baseUrl: process.argv[2], apiKey: 'test-key' });
const page = await client.party.getPaginated({ limit: 7 });
console.log(JSON.stringify({
  ids: page.items.map((p) => p._id),
  resources: RESOURCES,
  configError: new ConfigError('x') instanceof Error,
}));
`,
    );
    const { stdout } = await run('node', ['read-page.mjs', sim.url], { cwd: consumer });
    const out = JSON.parse(stdout) as { ids: string[]; resources: string[]; configError: boolean };
    const truth = sim.truth('parties') as unknown as { _id: string }[];
    expect(out.ids).toEqual(truth.slice(0, 7).map((p) => p._id));
    expect(out.resources).toContain('parties');
    expect(out.configError).toBe(true);
  });

  it('type-checks a TypeScript consumer against the shipped declarations', async () => {
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    await writeFile(
      join(consumer, 'consumer.ts'),
      `import { createClient } from 'gamedata-pipeline/client';
import type { Client, ClientOptions } from 'gamedata-pipeline/client';
import { GamedataError } from 'gamedata-pipeline';

const options: ClientOptions = { baseUrl: 'http://127.0.0.1:1/trpc' };
const client: Client = createClient(options);
export async function firstPartyId(): Promise<string | undefined> {
  const page = await client.party.getPaginated({ limit: 1 });
  return page.items[0]?._id;
}
export const isRetriable = (e: GamedataError): boolean => e.retriable;
// The declarations are real types, not any: a wrong option is an error.
// @ts-expect-error baseUrl is a string
createClient({ baseUrl: 42 });
`,
    );
    const result = await run('node', [TSC, '-p', 'tsconfig.json'], { cwd: consumer }).catch(
      (e: { stdout?: string; code?: number }) => ({ stdout: e.stdout ?? '', code: e.code }),
    );
    expect(result.stdout).toBe('');
  });

  it('holds no simulator and no TypeScript source, and stays small', async () => {
    const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz')) ?? '';
    const { stdout } = await run('tar', ['-tzf', join(dir, tarball)], { maxBuffer: 1 << 26 });
    const paths = stdout
      .split('\n')
      .filter((p) => p !== '')
      .map((p) => p.replace(/^package\//, ''));
    expect(paths.length).toBeGreaterThan(100);
    // only the package's own top level: no src/, no tools/ (the simulator), no tests or benches
    expect([...new Set(paths.map((p) => (p.includes('/') ? `${p.split('/')[0]}/` : p)))].sort()).toEqual(
      ['README.md', 'bin/', 'dist/', 'package.json', 'schemas/', 'scripts/'].sort(),
    );
    expect(paths.filter((p) => /simulat|trpc-handler|\.ts$/.test(p) && !p.endsWith('.d.ts'))).toEqual([]);
    const pkg = JSON.parse(
      readFileSync(join(consumer, 'node_modules/gamedata-pipeline/package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies)).not.toContain('@trpc/server');
    // 837 kB packed when the simulator left (2026-12-02); a bound that a second copy of anything would break
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(join(dir, tarball)));
    expect(size).toBeLessThan(1_100_000);
  });

  it('says in one line that `simulate` and `demo` are tools of the repository', async () => {
    for (const command of ['simulate', 'demo']) {
      const result = await run(join(consumer, 'node_modules/.bin/gamedata'), [command, 'serve'], {
        cwd: consumer,
      }).catch((e: { stderr?: string; code?: number }) => ({ stderr: e.stderr ?? '', code: e.code }));
      expect({ command, code: (result as { code?: number }).code }).toEqual({ command, code: 1 });
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(`gamedata ${command}\` is a tool of the repository.*npm run gamedata -- ${command}`),
        ),
      ]);
    }
  });

  it('installs a `gamedata` bin whose --help lists every command', async () => {
    const { stdout } = await run(join(consumer, 'node_modules/.bin/gamedata'), ['--help'], {
      cwd: consumer,
    });
    for (const name of Object.keys(COMMANDS)) expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });
});

/**
 * The Dockerfile's runtime stage without a container engine: the same tarball unpacked beside the committed
 * package-lock.json and its production dependencies installed by `npm ci --omit=dev --ignore-scripts`, as the image
 * does; what was installed is compared with the lock file, entry by entry; then the image's ENTRYPOINT is run from
 * there as a worker (against the test's simulator), and the image's HEALTHCHECK command against it.
 */
describe("the image's steps (Dockerfile runtime stage)", () => {
  const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  /** A JSON-array instruction of the Dockerfile's runtime stage (the last: other stages have their own), e.g. ENTRYPOINT. */
  const instruction = (name: string): string[] => {
    const m = new RegExp(`^${name}\\s+(?:--\\S+\\s+)*(?:CMD\\s+)?(\\[.*\\])\\s*$`, 'm').exec(
      DOCKERFILE.slice(DOCKERFILE.search(/^FROM .* AS runtime$/m)).replace(/\\\n\s*/g, ''),
    );
    if (m === null) throw new Error(`no ${name} [...] in the Dockerfile`);
    return JSON.parse(m[1] ?? '[]') as string[];
  };
  let app: string;
  const children: ChildProcess[] = [];
  // The real services when the environment names them (npm test and CI do): the worker then loads its whole
  // pipeline (kafkajs, BullMQ, the registry client) from the production dependencies and becomes ready.
  const services =
    process.env['KAFKA_BROKERS'] !== undefined &&
    process.env['SCHEMA_REGISTRY_URL'] !== undefined &&
    process.env['REDIS_URL'] !== undefined;

  /** The runtime stage's text (from its FROM on). */
  const RUNTIME = DOCKERFILE.slice(DOCKERFILE.search(/^FROM .* AS runtime$/m));

  beforeAll(async () => {
    app = join(dir, 'app');
    await run('mkdir', ['-p', app]);
    // the build stage unpacks the tarball beside the committed lock; the runtime stage installs from that lock
    expect(DOCKERFILE).toMatch(/tar -xzf \/pkg\/gamedata-pipeline\.tgz -C \/pkg\/app --strip-components=1/);
    expect(DOCKERFILE).toMatch(/cp package-lock\.json \/pkg\/app\/package-lock\.json/);
    expect(RUNTIME).toMatch(/COPY --from=build \/pkg\/app \/app\n/);
    expect(RUNTIME).toMatch(/RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund/);
    expect(RUNTIME).not.toMatch(/npm (install|i|update)\b/);
    const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz')) ?? '';
    await run('tar', ['-xzf', join(dir, tarball), '-C', app, '--strip-components=1']);
    await writeFile(join(app, 'package-lock.json'), readFileSync(join(ROOT, 'package-lock.json')));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', ...NPM_FLAGS], {
      cwd: app,
      env: { ...process.env, NODE_ENV: 'production' },
      maxBuffer: 1 << 26,
    });
  }, 170_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  /** The image's ENTRYPOINT with /app mapped to the test's app directory. */
  const start = (args: string[], env: NodeJS.ProcessEnv): Spawned => {
    const [node, ...entry] = instruction('ENTRYPOINT').map((a) => a.replace(/^\/app\//, `${app}/`));
    expect(node).toBe('node');
    const child = spawnProcess(process.execPath, [...entry, ...args], {
      cwd: app,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], NODE_ENV: 'production', ...env },
    });
    children.push(child.child);
    return child;
  };

  it("installs exactly the lock file's production packages: each at its locked version, resolved and integrity", () => {
    type Entry = {
      version?: string;
      resolved?: string;
      integrity?: string;
      dev?: boolean;
      optional?: boolean;
      os?: string[];
      cpu?: string[];
    };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, Entry>;
    };
    // what npm installed, as it records it (node_modules/.package-lock.json: one entry per installed folder)
    const installed = (
      JSON.parse(readFileSync(join(app, 'node_modules/.package-lock.json'), 'utf8')) as {
        packages: Record<string, Entry>;
      }
    ).packages;
    const pick = (e: Entry | undefined) => ({
      version: e?.version,
      resolved: e?.resolved,
      integrity: e?.integrity,
    });
    // every installed package is in the lock, identical
    for (const [path, entry] of Object.entries(installed))
      expect({ path, ...pick(entry) }).toEqual({ path, ...pick(lock.packages[path]) });
    // every production package of the lock is installed, but optional ones built for another platform
    const fits = (list: string[] | undefined, value: string): boolean =>
      list === undefined ||
      (list.includes(value) && !list.includes(`!${value}`)) ||
      (list.every((v) => v.startsWith('!')) && !list.includes(`!${value}`));
    const expected = Object.entries(lock.packages).filter(
      ([path, e]) =>
        path !== '' &&
        e.dev !== true &&
        !(e.optional === true && !(fits(e.os, process.platform) && fits(e.cpu, process.arch))),
    );
    expect(expected.length).toBeGreaterThan(100);
    expect(Object.keys(installed).sort()).toEqual(expected.map(([path]) => path).sort());
    // the root is the package itself, its dependencies those the lock was made for
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: object };
    expect(pkg.dependencies).toEqual((lock.packages[''] as { dependencies?: object }).dependencies);
  });

  it('installs no dev dependency and no source loader', async () => {
    const installed = await readdir(join(app, 'node_modules'));
    // (@trpc/server and its peer typescript came along while the simulator was in the package; it is a tool now.)
    for (const dev of [
      'tsx',
      'vitest',
      'eslint',
      'pino-pretty',
      'fast-check',
      'prettier',
      'testcontainers',
      '@trpc',
      'typescript',
    ])
      expect({ dev, installed: installed.includes(dev) }).toEqual({ dev, installed: false });
    expect(installed).toEqual(expect.arrayContaining(['kafkajs', 'bullmq', 'ioredis']));
    // the app is the package itself (unpacked), not a project depending on it
    expect(installed).not.toContain('gamedata-pipeline');
    expect((JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { name: string }).name).toBe(
      'gamedata-pipeline',
    );
  });

  it('runs a worker against the simulator: /healthz answers, HEALTHCHECK passes, SIGTERM drains', async () => {
    // The simulator is a tool of the repository (tools/simulator/), not in the image: the test's own, in-process.
    const apiUrl = sim.url;
    const metricsPort = await freePort();
    const prefix = `it-image-${process.pid}-${Date.now().toString(36)}`;
    const worker = start(
      ['worker', '--concurrency', '2', '--quiet', '--no-schedules', '--drain-timeout', '20s'],
      {
        GAMEDATA_API_URL: apiUrl,
        GAMEDATA_API_KEY: 'image-key',
        GAMEDATA_METRICS_HOST: '0.0.0.0',
        GAMEDATA_METRICS_PORT: String(metricsPort),
        GAMEDATA_TOPIC_PREFIX: prefix,
        GAMEDATA_QUEUE_PREFIX: prefix,
        GAMEDATA_REDIS_PREFIX: prefix,
        ...(services
          ? {
              KAFKA_BROKERS: process.env['KAFKA_BROKERS'],
              SCHEMA_REGISTRY_URL: process.env['SCHEMA_REGISTRY_URL'],
              REDIS_URL: process.env['REDIS_URL'],
            }
          : {
              KAFKA_BROKERS: '127.0.0.1:1',
              SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1',
              REDIS_URL: 'redis://127.0.0.1:1',
            }),
      },
    );
    try {
      // Services reachable: the whole pipeline loaded from the production dependencies; else it waits, alive.
      await worker.waitFor(services ? /^worker: pid / : /unreachable at .*retrying/, 60_000);
      const healthz = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
      expect(healthz.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(services ? 200 : 503);

      // The image's HEALTHCHECK command, as the engine runs it in the container.
      const healthcheck = instruction('HEALTHCHECK');
      const check = (port: number): Promise<number> =>
        run(process.execPath, healthcheck.slice(1), { env: { GAMEDATA_METRICS_PORT: String(port) } }).then(
          () => 0,
          (e: { code?: number }) => e.code ?? -1,
        );
      expect(healthcheck[0]).toBe('node');
      expect(await check(metricsPort)).toBe(0);
      expect(await check(await freePort())).toBe(1);

      worker.child.kill('SIGTERM');
      const code = await worker.exited;
      expect({ code, lines: worker.lines }).toMatchObject({ code: 0 });
      expect(worker.lines).toContain('worker: SIGTERM: draining');
      expect(worker.lines).toContain('worker: closed');
      expect(worker.lines.filter((l) => /^\s+at\s/.test(l))).toEqual([]);
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      // The worker's keys in the shared Redis (BullMQ queue metadata, budget keys): all under the test's prefix.
      if (services) {
        const redis = new Redis(process.env['REDIS_URL'] ?? '');
        const keys: string[] = [];
        for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<
          string[]
        >)
          keys.push(...batch);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
    }
  }, 120_000);
});

interface Spawned {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/** A child process whose stdout and stderr lines are collected, with a wait for a line. */
function spawnProcess(command: string, args: string[], options: SpawnOptions): Spawned {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  const onData = (b: Buffer): void => {
    const parts = (partial + b.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (partial !== '') lines.push(partial);
      resolve(code);
    }),
  );
  return {
    child,
    lines,
    exited,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.find((l) => pattern.test(l));
        if (hit !== undefined) return hit;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(
            `no line matching ${pattern} (exit ${String(child.exitCode)}):\n${lines.join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** A free loopback port (listened on, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
