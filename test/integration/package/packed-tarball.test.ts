/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepare`), installed from the tarball into
 * an empty plain-JS Node project (dependencies from the npm cache or registry). There, a plain ESM script imports
 * `gamedata-pipeline/client` and the root and reads a page from a simulator; a TypeScript consumer type-checks
 * against the shipped declarations (with the project's tsc); the installed `gamedata --help` lists every command.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../src/simulator/index.js';
import { COMMANDS } from '../../../src/cli/command-table.js';

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

  it('installs a `gamedata` bin whose --help lists every command', async () => {
    const { stdout } = await run(join(consumer, 'node_modules/.bin/gamedata'), ['--help'], {
      cwd: consumer,
    });
    for (const name of Object.keys(COMMANDS)) expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });
});
