/**
 * Encoding benchmark: records/s per resource and encoded size against the JSON size, on the simulator's records
 * (scale small, seed 1). Three measurements per resource:
 * - `map+avsc`: checkRecord + toAvroValue + avsc toBuffer (the pure CPU cost, no registry library);
 * - `library AvroSerializer`: checkRecord + mapping + the library's AvroSerializer as is;
 * - `encoder`: the production path, `createRecordEncoder().encode()` (checkRecord, mapping, @confluentinc
 *   AvroSerializer with the subject's latest schema, Confluent frame);
 * - `decoder`: `createRecordDecoder().decode()` (writer schema by id, mapping back).
 * Registry: SCHEMA_REGISTRY_URL when set (subjects under a throwaway prefix, deleted afterwards), else the
 * library's in-memory MockClient (the serializer caches the latest schema either way, so steady-state numbers match).
 *
 * Run: `npm run bench:encoding` (prints a Markdown table for docs/benchmarks/diary.md).
 */
import { cpus, loadavg, totalmem } from 'node:os';
import avro from 'avsc';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import type { Client } from '@confluentinc/schemaregistry';
import { createWorld } from '../tools/simulator/index.js';
import { RESOURCE_INFO, RESOURCES } from '../src/foundation/models/resources.js';
import { checkRecord } from '../src/foundation/models/check-record.js';
import {
  AVRO_TYPE_OPTIONS,
  createRecordDecoder,
  createRecordEncoder,
  createRegistryClient,
  deleteSubjects,
  generateResourceSchemas,
  registerSchemas,
  toAvroValue,
} from '../src/output/encoding/index.js';

const MIN_MS = Number(process.env['BENCH_MIN_MS'] ?? 1_500);

/**
 * Records per CPU-second of this process (user + system), not per wall-clock second: the machine is shared, and
 * CPU time is what another process's load does not inflate (much).
 */
async function timeIt(count: number, fn: (i: number) => unknown): Promise<number> {
  // Warm up (JIT, caches), then run whole passes until MIN_MS of CPU time were spent.
  for (let i = 0; i < Math.min(count, 200); i++) await fn(i);
  let done = 0;
  const start = process.cpuUsage();
  let cpuMs = 0;
  while (cpuMs < MIN_MS) {
    for (let i = 0; i < count; i++) await fn(i);
    done += count;
    const used = process.cpuUsage(start);
    cpuMs = (used.user + used.system) / 1000;
  }
  return (done / cpuMs) * 1000;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const url = process.env['SCHEMA_REGISTRY_URL'];
  const registry: Client = url ? createRegistryClient({ url }) : new MockClient({ baseURLs: ['mock://'] });
  const prefix = `bench-encoding-${process.pid}`;
  const schemas = generateResourceSchemas();
  await registerSchemas({ registry, topicPrefix: prefix, schemas });
  const encoder = createRecordEncoder({ registry, topicPrefix: prefix });
  const decoder = createRecordDecoder({ registry, topicPrefix: prefix });
  // The library's serializer as is (no compiled-type cache fix), to show what cached-avro-serde.ts buys.
  const library = new AvroSerializer(registry, SerdeType.VALUE, {
    useLatestVersion: true,
    autoRegisterSchemas: false,
    ...AVRO_TYPE_OPTIONS,
  });
  const world = createWorld({ scale: 'small', seed: 1 });

  const rows: string[] = [];
  try {
    for (const resource of RESOURCES) {
      const model = RESOURCE_INFO[resource].model;
      const records = world.truth(resource).slice(0, 2_000);
      const type = avro.Type.forSchema(schemas[resource] as avro.Schema, { ...AVRO_TYPE_OPTIONS });
      const encoded = await Promise.all(records.map((r) => encoder.encode(resource, r)));
      const jsonBytes =
        records.reduce((a, r) => a + Buffer.byteLength(JSON.stringify(r)), 0) / records.length;
      const avroBytes = encoded.reduce((a, b) => a + b.length, 0) / encoded.length;

      const pure = await timeIt(records.length, (i) => {
        const r = records[i];
        checkRecord(model, r);
        return type.toBuffer(toAvroValue(model, r));
      });
      const full = await timeIt(records.length, (i) => encoder.encode(resource, records[i]));
      const libraryOnly = await timeIt(records.length, (i) => {
        const r = records[i];
        checkRecord(model, r);
        return library.serialize(`${prefix}.${resource}`, toAvroValue(model, r));
      });
      const back = await timeIt(encoded.length, (i) => decoder.decode(resource, encoded[i] as Buffer));
      rows.push(
        `| ${resource} | ${records.length} | ${fmt(pure)} | ${fmt(libraryOnly)} | ${fmt(full)} | ${fmt(back)} | ${fmt(jsonBytes)} | ${fmt(avroBytes)} | ${((avroBytes / jsonBytes) * 100).toFixed(0)} % |`,
      );
      console.error(`[bench] ${resource} done`);
    }
  } finally {
    if (url) await deleteSubjects(registry, prefix);
  }

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `Machine: ${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
      `load average ${loadavg()[0]?.toFixed(1)} during the run (shared machine); date ${new Date().toISOString().slice(0, 10)}; registry: ${url ? 'real (Apicurio ccompat)' : 'in-memory MockClient'}.`,
  );
  console.log('');
  console.log('Throughput in records per CPU-second of the benchmark process.');
  console.log('');
  console.log(
    '| resource | records | map+avsc | library AvroSerializer | encoder | decoder | JSON B/rec | Avro B/rec (framed) | Avro/JSON |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
}

await main();
