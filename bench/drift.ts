/**
 * The cost of drift tracking (issue 35) on the worker's encode path: CPU microseconds per record of the page encoder
 * (`createPageEncoder`, the code every worker page goes through: checkRecord, mapping, the serializer, dead letters)
 * with drift tracking off (no `onDrift`: no tracker, no quiet-field watch, no store write) and on (the runtime's
 * wiring: the per-page tracker, `field_gone_quiet`'s watch, the Redis store's one script call per drifted page),
 * alternating off/on `--rounds` times in one process, on scale-medium records (the default world has upstream's
 * four extra transaction fields, so every transaction drifts: the worst case the service really sends).
 * CPU time (process.cpuUsage, user + system), not wall: the box is shared. The figure to compare with is the
 * pipeline's worker CPU per record (docs/BENCHMARKS.md: 57 µs at scale medium, transactions, at-least-once).
 *
 * Run: `SCHEMA_REGISTRY_URL=... REDIS_URL=... npx tsx bench/drift.ts [--resource transactions] [--records 100000]
 * [--rounds 5]` (REDIS_URL unset: the store write is skipped; SCHEMA_REGISTRY_URL unset: the library's MockClient).
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { MockClient } from '@confluentinc/schemaregistry';
import type { Client } from '@confluentinc/schemaregistry';
import { Redis } from 'ioredis';
import { createWorld } from '../tools/simulator/index.js';
import { isResourceName, type ResourceName } from '../src/foundation/models/resources.js';
import {
  createRecordEncoder,
  createRegistryClient,
  deleteSubjects,
  generateResourceSchemas,
  registerSchemas,
} from '../src/output/encoding/index.js';
import { createPageEncoder } from '../src/pipeline/publish/index.js';
import { createRedisDriftStore } from '../src/pipeline/drift/index.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const resource = arg('resource', 'transactions') as ResourceName;
if (!isResourceName(resource) || resource === ('countries' as string))
  throw new Error(`--resource must be a resource name, got ${resource}`);
const limit = Number(arg('records', '100000'));
const rounds = Number(arg('rounds', '5'));
const PAGE = 100;

async function main(): Promise<void> {
  const url = process.env['SCHEMA_REGISTRY_URL'];
  const registry: Client = url ? createRegistryClient({ url }) : new MockClient({ baseURLs: ['mock://'] });
  const redisUrl = process.env['REDIS_URL'];
  const redis = redisUrl ? new Redis(redisUrl) : undefined;
  const prefix = `bench-drift-${process.pid}`;
  await registerSchemas({ registry, topicPrefix: prefix, schemas: generateResourceSchemas() });
  const t0 = Date.now();
  const records = createWorld({ scale: 'medium', seed: 1 }).truth(resource).slice(0, limit);
  console.error(`${records.length} ${resource} of scale medium in ${Date.now() - t0} ms`);
  const pages: unknown[][] = [];
  for (let i = 0; i < records.length; i += PAGE) pages.push(records.slice(i, i + PAGE));
  const lineage = { runId: 'bench', sliceId: 'bench', sourceOperation: 'bench', fetchedAt: Date.now() };
  const store = redis === undefined ? undefined : createRedisDriftStore(redis, { prefix });
  let drifted = 0;
  const off = createPageEncoder({ encoder: createRecordEncoder({ registry, topicPrefix: prefix }) });
  const on = createPageEncoder({
    encoder: createRecordEncoder({ registry, topicPrefix: prefix }),
    onDrift: (r, d) => {
      drifted++;
      store?.record(r, d).catch(() => undefined);
    },
  });
  const pass = async (encode: typeof off): Promise<number> => {
    const start = process.cpuUsage();
    for (const page of pages) await encode({ resource, records: page, lineage });
    const used = process.cpuUsage(start);
    return (used.user + used.system) / records.length; // µs per record
  };
  // Warm-up: JIT, the registry's caches, the compiled types.
  await pass(off);
  await pass(on);
  const offs: number[] = [];
  const ons: number[] = [];
  const load: number[] = [];
  for (let r = 0; r < rounds; r++) {
    load.push(loadavg()[0] ?? 0);
    offs.push(await pass(off));
    ons.push(await pass(on));
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const mOff = median(offs);
  const mOn = median(ons);
  const pairs = offs.map((o, i) => (ons[i] ?? NaN) - o);
  console.log(
    `Machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load (1 min) ${load.map((l) => l.toFixed(1)).join(' / ')}; ${new Date().toISOString()}`,
  );
  console.log(
    `${resource}, ${records.length} records of scale medium, pages of ${PAGE}, ${rounds} rounds off/on alternating, ${drifted / (rounds + 1)} drifted pages per pass`,
  );
  console.log(`| round | off µs/rec | on µs/rec | on - off |`);
  console.log(`|---|---|---|---|`);
  offs.forEach((o, i) =>
    console.log(
      `| ${i + 1} | ${o.toFixed(2)} | ${(ons[i] ?? NaN).toFixed(2)} | ${(pairs[i] ?? NaN).toFixed(2)} |`,
    ),
  );
  console.log(
    `median off ${mOff.toFixed(2)} µs, on ${mOn.toFixed(2)} µs, median paired difference ${median(pairs).toFixed(2)} µs per record`,
  );
  await deleteSubjects(registry, prefix).catch(() => undefined);
  if (redis !== undefined) {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

await main();
