/**
 * Redis' CPU per record of the exactly-once dedup protocol (dedup/pending-marks.ts on the compact seen-set): per page
 * of fresh transactions, claim (seen check + locks) -> write the intent -> settle as committed (mark seen, unlock,
 * clear the intent), 8 slices at once, as the worker does. Redis' CPU is read from /proc/<pid>/stat of the Redis
 * process (so run it on the same machine as Redis), and the per-command split from INFO commandstats.
 *
 *   REDIS_URL=redis://127.0.0.1:16379 npx tsx bench/dedup-protocol.ts --redis-pid $(cat .stack/run/redis.pid)
 *   ... --records 200000 --page 70 --bucket-entries 256 --split
 *
 * `--split` claims every page first and settles them afterwards, to give the claim's and the settle's costs apart.
 * `--by-mark` runs the pages as a run alone on its resource does (`dedup/mark-claims.ts`: registered, each slice
 * opened by its session; the claim marks, a committed settle only drops the page), instead of with per-id locks.
 * Everything lives under a key prefix of its own and is deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import {
  createPendingMarks,
  createRedisPendingMarks,
  createRunRegistry,
  pageKeyOf,
  type PendingPage,
} from '../src/pipeline/dedup/index.js';
import { cpuSeconds, describeMachine } from './machine.js';
import { objectIds } from './object-ids.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const RECORDS = Number(flag('records') ?? 200_000);
const PAGE = Number(flag('page') ?? 70);
const BUCKET_ENTRIES = Number(flag('bucket-entries') ?? 256);
const SLICES = 8;
const SPLIT = args.includes('--split');
const BY_MARK = args.includes('--by-mark');
const redisPid = Number(flag('redis-pid'));
if (!Number.isSafeInteger(redisPid) || redisPid < 1)
  throw new Error('--redis-pid <pid of redis-server> is required');

if (!existsSync(`/proc/${redisPid}/stat`)) throw new Error(`--redis-pid ${redisPid}: no such process`);

const never = (): Promise<boolean> => Promise.reject(new Error('no page of another slice shares ids here'));

/** Redis' user + system CPU so far, in ms. */
const redisCpuMs = (): number => cpuSeconds(redisPid) * 1000;

async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const line of (await redis.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_(\w+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

async function main(): Promise<void> {
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379', {
    enableAutoPipelining: true,
  });
  const prefix = `bench-eos-dedup-${randomUUID().slice(0, 8)}`;
  const backend = createRedisPendingMarks(redis, { bucketEntries: BUCKET_ENTRIES });
  const marks = createPendingMarks(backend, { prefix });
  if (BY_MARK)
    await createRunRegistry(backend, { prefix }).register({ runId: 'bench', resources: ['transactions'] });
  const ids = objectIds(RECORDS, 3, 1_700_000_000);
  console.log(`machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}`);
  const before = await commandStats(redis);
  const cpu0 = redisCpuMs();
  const t0 = Date.now();
  const claimed: [string, PendingPage][] = [];
  await Promise.all(
    Array.from({ length: SLICES }, async (_, s) => {
      const sliceKey = `bench/${s}`;
      const session = `s${s}`;
      if (BY_MARK) await marks.openSlice(sliceKey, session);
      let seq = 0;
      for (let p = s * PAGE; p < RECORDS; p += SLICES * PAGE) {
        const records = ids.slice(p, p + PAGE).map((_id) => ({ _id }));
        const claim = BY_MARK
          ? await marks.claim(pageKeyOf(sliceKey, seq, 'w', session), 'transactions', records, never, {
              run: 'bench',
            })
          : await marks.claim(pageKeyOf(sliceKey, seq), 'transactions', records, never);
        if (BY_MARK && claim.page.run === undefined) throw new Error('the page was not claimed by mark');
        if (!BY_MARK) await marks.writeIntent(sliceKey, claim.page);
        if (SPLIT) claimed.push([sliceKey, claim.page]);
        else await marks.settle(sliceKey, [claim.page], true);
        seq += 1;
      }
    }),
  );
  const perRecord = (ms: number): string => ((ms * 1000) / RECORDS).toFixed(1);
  if (SPLIT) {
    const cpuClaimed = redisCpuMs();
    for (const [sliceKey, page] of claimed) await marks.settle(sliceKey, [page], true);
    console.log(`claim + intent: ${perRecord(cpuClaimed - cpu0)} µs of Redis CPU per record`);
    console.log(`settle:         ${perRecord(redisCpuMs() - cpuClaimed)} µs of Redis CPU per record`);
  }
  const ms = Date.now() - t0;
  console.log(
    `${BY_MARK ? 'by mark' : 'locks'}, ${RECORDS} records, pages of ${PAGE}, bucketEntries ${BUCKET_ENTRIES}: ${Math.round((RECORDS / ms) * 1000)} records/s, ` +
      `Redis CPU ${perRecord(redisCpuMs() - cpu0)} µs per record`,
  );
  for (const [name, after] of await commandStats(redis)) {
    const b = before.get(name) ?? { calls: 0, usec: 0 };
    if (after.calls - b.calls > 0 && after.usec - b.usec > RECORDS / 100)
      console.log(
        `  ${name}: ${after.calls - b.calls} calls, ${((after.usec - b.usec) / RECORDS).toFixed(2)} µs per record`,
      );
  }
  // The seen-set's memory (its buckets, dictionary and meta; the locks are gone once settled): MEMORY USAGE counts a
  // key's allocation, so an APPENDed bucket's preallocated room is in it.
  let seenBytes = 0;
  let scan = '0';
  do {
    const [next, keys] = await redis.scan(scan, 'MATCH', `${prefix}:seen:*`, 'COUNT', 1000);
    scan = next;
    for (const key of keys) seenBytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  } while (scan !== '0');
  console.log(`seen-set: ${(seenBytes / RECORDS).toFixed(1)} bytes of Redis per record (MEMORY USAGE)`);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();
}

await main();
