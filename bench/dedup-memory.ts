/**
 * Dedup memory benchmark: Redis bytes per record of the seen-set after 1 M immutable records (transactions), and
 * bytes per entity after ten rescans of a changing resource (100 k users, each with a new `updatedAt` every rescan),
 * for the compact layout and, in the same run, for the old layout (a Redis set of `_id` / `_id@updatedAt` strings)
 * and the alternatives considered (a set of binary ids; hashes of id bytes in listpack encoding).
 *
 *   REDIS_URL=redis://127.0.0.1:16379 npm run bench:dedup
 *   npm run bench:dedup -- --records 200000 --entities 20000
 *
 * Bytes are MEMORY USAGE (SAMPLES 0: exact) summed over the layout's keys, plus 16 bytes per key for the slot of the
 * main key table (8 bytes at a load factor of 1, up to 16 right after the table doubled). Everything lives under a
 * key prefix of its own and is deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisSeenSet } from '../src/pipeline/dedup/index.js';
import { describeMachine } from './machine.js';
import { objectIds } from './object-ids.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const RECORDS = Number(flag('records') ?? 1_000_000);
const ENTITIES = Number(flag('entities') ?? 100_000);
const RESCANS = Number(flag('rescans') ?? 10);
const BATCH = 1000;
const KEY_SLOT_BYTES = 16;
const prefix = `bench-dedup-${randomUUID().slice(0, 8)}`;

async function bytesUnder(redis: Redis, match: string): Promise<{ bytes: number; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const k of found) pipe.memory('USAGE', k, 'SAMPLES', 0);
    for (const [err, n] of (await pipe.exec()) ?? []) if (err === null) bytes += Number(n) + KEY_SLOT_BYTES;
    keys += found.length;
  } while (cursor !== '0');
  return { bytes, keys };
}

async function deleteUnder(redis: Redis, match: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) await redis.del(...found);
  } while (cursor !== '0');
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

async function measure(
  redis: Redis,
  label: string,
  name: string,
  per: number,
  unit: string,
  writes: number,
  fill: () => Promise<void>,
): Promise<number> {
  const t0 = performance.now();
  await fill();
  const ms = performance.now() - t0;
  const { bytes, keys } = await bytesUnder(redis, `${name}*`);
  const figure = bytes / per;
  console.log(
    `  ${label.padEnd(52)} ${fmt(figure).padStart(7)} bytes/${unit}  (${keys.toLocaleString('en-US')} keys; ${fmt(ms / (writes / 1000), 1)} ms per 1k writes)`,
  );
  await deleteUnder(redis, `${name}*`);
  return figure;
}

async function main(): Promise<void> {
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379', {
    maxRetriesPerRequest: null,
  });
  const info = await redis.info('server');
  const cfg = await redis.config('GET', 'hash-max-listpack-*');
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}`);
  console.log(`redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'} (${cfg.join(' ')}); prefix ${prefix}`);
  const seen = createRedisSeenSet(redis);
  try {
    // --- immutable: transactions ---
    const start = Math.floor(Date.UTC(2026, 10, 1) / 1000);
    const ids = objectIds(RECORDS, 9, start); // ~0.75 M per day, as the real feed
    console.log(`immutable: ${RECORDS.toLocaleString('en-US')} transactions`);
    const chunks = <T>(xs: T[]): T[][] =>
      Array.from({ length: Math.ceil(xs.length / BATCH) }, (_, i) => xs.slice(i * BATCH, (i + 1) * BATCH));
    const oldImm = await measure(
      redis,
      'old: set of 24-hex strings',
      `${prefix}:old`,
      RECORDS,
      'record',
      RECORDS,
      async () => {
        for (const c of chunks(ids)) await redis.sadd(`${prefix}:old`, ...c);
      },
    );
    await measure(
      redis,
      'alt: set of 12-byte binary ids',
      `${prefix}:bin`,
      RECORDS,
      'record',
      RECORDS,
      async () => {
        for (const c of chunks(ids))
          await redis.sadd(`${prefix}:bin`, ...c.map((id) => Buffer.from(id, 'hex')));
      },
    );
    // Listpack hashes (value ''), a bucket count that keeps each under 512 entries, 10-byte fields: what an exact
    // scheme with two id bytes in the bucket address would store. A memory figure only (these fields are not exact).
    const hashBuckets = 2 ** Math.ceil(Math.log2(RECORDS / 400));
    await measure(
      redis,
      `alt: ${hashBuckets} listpack hashes, field 10 B, value ''`,
      `${prefix}:hb`,
      RECORDS,
      'record',
      RECORDS,
      async () => {
        for (const c of chunks(ids)) {
          const pipe = redis.pipeline();
          for (const id of c) {
            const b = Buffer.from(id, 'hex');
            const bucket = (b.readUInt16BE(10) * 40_503 + b.readUInt32BE(0)) % hashBuckets;
            pipe.hset(`${prefix}:hb:${bucket}`, Buffer.concat([b.subarray(0, 9), b.subarray(10, 11)]), '');
          }
          await pipe.exec();
        }
      },
    );
    const newImm = await measure(
      redis,
      'new: packed 8-byte entries, linear hashing',
      `${prefix}:seen:transactions`,
      RECORDS,
      'record',
      RECORDS,
      async () => {
        for (const c of chunks(ids))
          await seen.add(
            [`${prefix}:seen:transactions`],
            false,
            c.map((id) => ({ id, version: '' })),
          );
        // Exactness spot check: every written id is seen, fresh ids are not.
        const sample = ids.filter((_, i) => i % 997 === 0);
        const fresh = objectIds(500, 9, start + 10_000_000);
        const got = await seen.has(`${prefix}:seen:transactions`, false, [
          ...sample.map((id) => ({ id, version: '' })),
          ...fresh.map((id) => ({ id, version: '' })),
        ]);
        if (got.slice(0, sample.length).some((x) => !x) || got.slice(sample.length).some((x) => x))
          throw new Error('seen-set answered wrongly');
      },
    );

    // --- changing: users, ten rescans ---
    console.log(
      `changing: ${ENTITIES.toLocaleString('en-US')} users x ${RESCANS} rescans (a new updatedAt each time)`,
    );
    const users = objectIds(ENTITIES, 1, start - 86_400 * 200);
    const version = (i: number, r: number): string =>
      new Date(Date.UTC(2026, 10, 1) + r * 3_600_000 + i * 7).toISOString();
    const oldChg = await measure(
      redis,
      'old: set of "_id@updatedAt" strings',
      `${prefix}:oldu`,
      ENTITIES,
      'entity',
      ENTITIES * RESCANS,
      async () => {
        for (let r = 0; r < RESCANS; r++)
          for (const [ci, c] of chunks(users).entries())
            await redis.sadd(`${prefix}:oldu`, ...c.map((id, j) => `${id}@${version(ci * BATCH + j, r)}`));
      },
    );
    const newChg = await measure(
      redis,
      'new: packed 13-byte entries (id + version)',
      `${prefix}:seen:users`,
      ENTITIES,
      'entity',
      ENTITIES * RESCANS,
      async () => {
        for (let r = 0; r < RESCANS; r++)
          for (const [ci, c] of chunks(users).entries())
            await seen.add(
              [`${prefix}:seen:users`],
              true,
              c.map((id, j) => ({ id, version: version(ci * BATCH + j, r) })),
            );
        const last = RESCANS - 1;
        const got = await seen.has(`${prefix}:seen:users`, true, [
          { id: users[0]!, version: version(0, last) },
          { id: users[1]!, version: version(1, last - 1) },
          { id: users[2]!, version: version(2, last + 1) },
        ]);
        if (got.join() !== 'true,true,false') throw new Error(`seen-set answered wrongly: ${got.join()}`);
      },
    );
    console.log(
      `summary: immutable ${fmt(newImm)} bytes/record (old ${fmt(oldImm)}, ${fmt(oldImm / newImm)}x less); changing ${fmt(newChg)} bytes/entity after ${RESCANS} rescans (old ${fmt(oldChg)}); limit 16: ${newImm <= 16 && newChg <= 16 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await deleteUnder(redis, `${prefix}*`);
    await redis.quit();
  }
}

await main();
