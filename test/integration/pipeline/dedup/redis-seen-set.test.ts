/**
 * The Redis seen-set backend against the real Redis: the compact layout answers exactly like the in-memory model
 * (through many linear-hashing splits), lands each record where the pure core says, falls back exactly for odd
 * ids, versions and a full process dictionary, reads and migrates the old layout; and the cross-process in-flight
 * locks (the seen check and one SET NX PX per key, in one script call per page).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDedupStore,
  createMemorySeenSet,
  createRedisSeenSet,
  migrateLegacySeenSets,
  type SeenEntry,
} from '../../../../src/pipeline/dedup/index.js';
import {
  processIndexes,
  recordArgs,
  scriptRunner,
  SEEN_SET_LUA,
} from '../../../../src/pipeline/dedup/internal/seen-set-lua.js';
import {
  bucketAddress,
  bucketHash,
  encodeVersion,
  idEntry,
  MAX_PROCESS_INDEX,
  processPart,
} from '../../../../src/pipeline/dedup/seen-encoding.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const prefix = `it-seen-${randomUUID().slice(0, 8)}`;

/** ObjectIds as MongoDB makes them: seconds, one of `processes` 5-byte parts, a running counter. */
function objectIds(count: number, processes = 3): string[] {
  const parts = Array.from({ length: processes }, () => randomBytes(5));
  const b = Buffer.alloc(12);
  let counter = randomBytes(3).readUIntBE(0, 3);
  return Array.from({ length: count }, (_, i) => {
    b.writeUInt32BE(0x69000000 + Math.floor(i / 7), 0);
    parts[i % processes]!.copy(b, 4);
    counter = (counter + 1) % 2 ** 24;
    b.writeUIntBE(counter, 9, 3);
    return b.toString('hex');
  });
}
const at = (s: number): string => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
const imm = (id: string): SeenEntry => ({ id, version: '' });

describe('createRedisSeenSet on real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
    await redis.quit();
  });

  it('immutable: has / add / drop, ObjectIds and odd ids, several sets at once', async () => {
    const seen = createRedisSeenSet(redis);
    const [a, b] = [`${prefix}:seen:transactions`, `${prefix}:seen:transactions:run:r1`];
    const [x, y, z] = objectIds(3);
    await seen.add([a, b], false, [imm(x!), imm('odd-1'), imm('42')]);
    expect(await seen.has(a, false, [imm(x!), imm(y!), imm('odd-1'), imm('42'), imm('43')])).toEqual([
      true,
      false,
      true,
      true,
      false,
    ]);
    // Upper-case hex is another string, not the same ObjectId.
    expect(await seen.has(a, false, [imm(x!.toUpperCase())])).toEqual([false]);
    expect(await seen.has(b, false, [imm(x!), imm(z!)])).toEqual([true, false]);
    await seen.drop([a]);
    expect(await seen.has(a, false, [imm(x!), imm('odd-1')])).toEqual([false, false]);
    expect(await redis.keys(`${a}:v2:*`)).toEqual([]);
    expect(await redis.exists(`${b}:v2:meta`)).toBe(1);
    expect(await seen.has(b, false, [])).toEqual([]);
  });

  it('answers exactly like the in-memory model through many bucket splits (immutable and changing)', async () => {
    // 4 entries per bucket: 256 buckets hold ~1 000 entries; 6 000 records force ~1 300 splits.
    const redisSet = createRedisSeenSet(redis, { bucketEntries: 4 });
    const model = createMemorySeenSet();
    const ids = objectIds(6000, 5);
    for (const versioned of [false, true]) {
      const name = `${prefix}:seen:model-${String(versioned)}`;
      const entry = (i: number, v: number): SeenEntry => ({
        id: i % 50 === 0 ? `odd-${i}` : ids[i]!,
        version: versioned ? (i % 70 === 0 ? `text-${v}` : i % 30 === 0 ? String(v) : at(v)) : '',
      });
      let rng = 7;
      const rand = (n: number): number => {
        rng ^= rng << 13;
        rng ^= rng >>> 17;
        rng ^= rng << 5;
        return (rng >>> 0) % n;
      };
      for (let round = 0; round < 12; round++) {
        const batch = Array.from({ length: 500 }, () => entry(rand(ids.length), rand(5)));
        await redisSet.add([name], versioned, batch);
        await model.add([name], versioned, batch);
        const probe = Array.from({ length: 800 }, () => entry(rand(ids.length), rand(6)));
        expect(await redisSet.has(name, versioned, probe)).toEqual(await model.has(name, versioned, probe));
      }
      const [level, split, n] = await redis.hmget(`${name}:v2:meta`, 'L', 'S', 'n');
      expect(Number(level)).toBeGreaterThanOrEqual(9);
      // `n` counts compact entries: one per distinct ObjectId (odd ids are in the fallback).
      const compact = [...(model.sets.get(name)?.entries() ?? [])].filter(
        ([id, s]) => !id.startsWith('odd') && s.code !== undefined,
      );
      expect(Number(n)).toBe(compact.length);
      // Each record sits in the bucket the pure core computes, at an aligned offset.
      const width = versioned ? 13 : 8;
      const table = { level: Number(level), split: Number(split) };
      const [id] = compact[0]!;
      const oid = Buffer.from(id, 'hex');
      const pi = (await redis.hgetBuffer(`${name}:v2:proc`, oid.subarray(4, 9)))!.readUInt16BE(0);
      const e = idEntry(oid, pi);
      const bucket = (await redis.getBuffer(
        `${name}:v2:b:${bucketAddress(bucketHash(e, oid[11]!), table)}`,
      ))!;
      const offsets = [];
      for (let p = 0; p < bucket.length; p += width) if (bucket.subarray(p, p + 8).equals(e)) offsets.push(p);
      expect(offsets).toHaveLength(1);
      if (versioned) expect(bucket.readUIntBE(offsets[0]! + 8, 5)).toBe(model.sets.get(name)?.get(id)?.code);
    }
  });

  it("hints (an id's entry and bucket hash computed in Node): used when the index is the set's, ignored when stale; every id lands where the pure core says (issue 47)", async () => {
    // The scripts' own add (blind or not) and lookup, fed the hinted arguments of recordArgs.
    const addScript = scriptRunner(
      redis,
      `${SEEN_SET_LUA}
local recs = {}
for r = 3, #ARGV do recs[#recs + 1] = ARGV[r] end
add_to(KEYS[1], 8, tonumber(ARGV[1]), recs, ARGV[2] == '1')
return 0`,
    );
    const hasScript = scriptRunner(
      redis,
      `${SEEN_SET_LUA}
local L, S = meta(KEYS[1])
local cache, out = {}, {}
for r = 1, #ARGV, 3 do out[#out + 1] = seen_in(KEYS[1], 8, L, S, false, cache, ARGV[r], ARGV[r + 1], ARGV[r + 2]) end
return out`,
    );
    const plain = createRedisSeenSet(redis, { bucketEntries: 4 });
    const ids = objectIds(3000, 4);
    const entries = ids.map((id): SeenEntry => ({ id, version: '' }));
    for (const blind of [true, false]) {
      const name = `${prefix}:seen:hints-${String(blind)}`;
      const indexes = processIndexes(redis);
      // Right indexes once learned; a stale cache's wrong ones (index + 1) for a third of the pages.
      for (let p = 0; p < 2000; p += 100) {
        const page = entries.slice(p, p + 100);
        const right = indexes.of(name);
        const of = p % 300 === 200 ? (part: Buffer) => (right(part) ?? 0) + 1 : right;
        const args = recordArgs(page, false, of);
        if (p > 0) expect(args.filter((a) => Buffer.isBuffer(a) && a.length === 26).length).toBe(100);
        await addScript(1, [name, '4', blind ? '1' : '0', ...args]);
        await indexes.learn(name);
      }
      // Found by the unhinted lookup and by hinted ones (right and wrong), and not the ids never added.
      expect((await plain.has(name, false, entries.slice(0, 2000))).every(Boolean)).toBe(true);
      expect((await plain.has(name, false, entries.slice(2000))).some(Boolean)).toBe(false);
      const wrong = (part: Buffer): number => (indexes.of(name)(part) ?? 0) + 7;
      for (const of of [indexes.of(name), wrong]) {
        const got = (await hasScript(1, [name, ...recordArgs(entries, false, of)])) as number[];
        expect(got.slice(0, 2000).every((x) => x === 1)).toBe(true);
        expect(got.slice(2000).some((x) => x === 1)).toBe(false);
      }
      // Each id in the bucket the pure core computes with the set's own index.
      const [level, split] = await redis.hmget(`${name}:v2:meta`, 'L', 'S');
      const table = { level: Number(level), split: Number(split) };
      // 2 000 ids at 4 a bucket: ~240 splits past the 256 buckets of the start.
      expect(2 ** table.level + table.split).toBeGreaterThan(400);
      for (const id of ids.slice(0, 2000).filter((_, i) => i % 97 === 0)) {
        const oid = Buffer.from(id, 'hex');
        const pi = (await redis.hgetBuffer(`${name}:v2:proc`, processPart(oid)))!.readUInt16BE(0);
        const e = idEntry(oid, pi);
        const bucket = (await redis.getBuffer(
          `${name}:v2:b:${bucketAddress(bucketHash(e, oid[11]!), table)}`,
        ))!;
        let found = 0;
        for (let q = 0; q < bucket.length; q += 8) if (bucket.subarray(q, q + 8).equals(e)) found += 1;
        expect(found).toBe(1);
      }
    }
  });

  it('changing: one entry per entity, the latest version; stale and same versions are covered', async () => {
    const seen = createRedisSeenSet(redis);
    const name = `${prefix}:seen:users`;
    const [u] = objectIds(1);
    for (const v of [3, 1, 2]) await seen.add([name], true, [{ id: u!, version: at(v) }]);
    expect(
      await seen.has(
        name,
        true,
        [0, 3, 4].map((v) => ({ id: u!, version: at(v) })),
      ),
    ).toEqual([true, true, false]);
    expect(
      await redis.strlen(`${name}:v2:b:${(await redis.keys(`${name}:v2:b:*`))[0]!.split(':').pop()}`),
    ).toBe(13);
    // A version of the other kind is never covered (and replaces the stored one).
    expect(await seen.has(name, true, [{ id: u!, version: '2' }])).toEqual([false]);
    expect(encodeVersion('2')).toBe(2);
  });

  it('a full process dictionary sends further ObjectIds to the exact fallback', async () => {
    const seen = createRedisSeenSet(redis);
    const name = `${prefix}:seen:donations`;
    const ids = objectIds(MAX_PROCESS_INDEX + 20, MAX_PROCESS_INDEX + 20);
    for (let i = 0; i < ids.length; i += 5000) await seen.add([name], false, ids.slice(i, i + 5000).map(imm));
    expect(await redis.hlen(`${name}:v2:proc`)).toBe(MAX_PROCESS_INDEX);
    expect(await redis.scard(`${name}:v2:odd`)).toBe(20);
    const fresh = objectIds(10, 10);
    const got = await seen.has(name, false, [...ids.slice(-30), ...fresh].map(imm));
    expect(got).toEqual([...new Array<boolean>(30).fill(true), ...new Array<boolean>(10).fill(false)]);
  });

  it('old-layout seen-sets still dedup after the upgrade, before and after migration', async () => {
    const p = `${prefix}-legacy`;
    const tx = objectIds(21_000);
    const users = objectIds(300);
    // What the previous version left: one set of `_id` and one of `_id@updatedAt` (every version), one replay scope.
    await redis.sadd(`${p}:seen:transactions`, ...tx.slice(0, 1000), 'odd-tx');
    // Enough records that bucket overhead (a compact set has at least 256 buckets) does not dominate.
    for (let i = 1010; i < tx.length; i += 5000)
      await redis.sadd(`${p}:seen:transactions`, ...tx.slice(i, i + 5000));
    await redis.sadd(
      `${p}:seen:users`,
      ...users.flatMap((u) => [`${u}@${at(1)}`, `${u}@${at(2)}`]),
      'odd@user@' + at(1),
    );
    await redis.sadd(`${p}:seen:transactions:run:r9`, tx[5]!);
    const store = createDedupStore(createRedisSeenSet(redis), { prefix: p });
    const check = async (): Promise<void> => {
      const t = await store.claim(
        'transactions',
        [...tx.slice(990, 1010), 'odd-tx', 'odd-new'].map((_id) => ({ _id })),
      );
      expect(t.fresh.map((r) => r._id)).toEqual([...tx.slice(1000, 1010), 'odd-new']);
      t.release();
      const u = await store.claim('users', [
        { _id: users[0], updatedAt: at(2) },
        { _id: users[1], updatedAt: at(1) },
        { _id: users[2], updatedAt: at(3) },
        { _id: 'odd@user', updatedAt: at(1) },
      ]);
      expect(u.fresh).toEqual([{ _id: users[2], updatedAt: at(3) }]);
      u.release();
      const r = await store.claim('transactions', [{ _id: tx[5] }, { _id: tx[6] }], { scope: 'r9' });
      expect(r.fresh).toEqual([{ _id: tx[6] }]);
      r.release();
    };
    await check(); // read through the old layout
    const before = Number(await redis.memory('USAGE', `${p}:seen:transactions`, 'SAMPLES', 0));
    const report = await migrateLegacySeenSets(redis, createRedisSeenSet(redis), {
      prefix: p,
      batchSize: 300,
    });
    expect(report.sets).toEqual([
      { key: `${p}:seen:transactions`, members: 20_991 },
      { key: `${p}:seen:transactions:run:r9`, members: 1 },
      { key: `${p}:seen:users`, members: 601 },
    ]);
    expect(
      await redis.exists(`${p}:seen:transactions`, `${p}:seen:users`, `${p}:seen:transactions:run:r9`),
    ).toBe(0);
    await check(); // the same answers from the compact layout alone
    let after = 0;
    for (const k of await redis.keys(`${p}:seen:transactions:v2:*`))
      after += Number(await redis.memory('USAGE', k, 'SAMPLES', 0));
    expect(after).toBeLessThan(before / 3);
    // Running it again finds nothing to move.
    expect((await migrateLegacySeenSets(redis, createRedisSeenSet(redis), { prefix: p })).sets).toEqual([]);
  });

  it('a script Redis has not cached answers NOSCRIPT, the error the backend falls back to EVAL on', async () => {
    // (Flushing the shared Redis' script cache would disturb other users; this checks the error the fallback reads.)
    await expect(redis.evalsha('0'.repeat(40), 0)).rejects.toThrow(/^NOSCRIPT/);
  });

  it("claimLocks: seen check and locks in one step; each key once per owner until unlocked or expired; unlock frees only the owner's keys", async () => {
    const seen = createRedisSeenSet(redis);
    const set = `${prefix}:seen:claims`;
    const [a, b, c] = objectIds(3);
    await seen.add([set], false, [imm(a!)]);
    const keys = [`${prefix}:l1`, `${prefix}:l2`, `${prefix}:l3`];
    const entries = [imm(a!), imm(b!), imm(c!)];
    expect(await seen.claimLocks!(set, false, [], [], 'p1', 1000)).toEqual([]);
    // A seen record takes no lock.
    expect(await seen.claimLocks!(set, false, entries.slice(0, 2), keys.slice(0, 2), 'p1', 30_000)).toEqual([
      'seen',
      'locked',
    ]);
    expect(await redis.exists(keys[0]!)).toBe(0);
    expect(await seen.claimLocks!(set, false, entries, keys, 'p2', 30_000)).toEqual([
      'seen',
      'busy',
      'locked',
    ]);
    expect(await redis.get(keys[1]!)).toBe('p1');
    const ttl = await redis.pttl(keys[1]!);
    expect(ttl).toBeGreaterThan(20_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    await seen.unlock!(keys, 'p1');
    expect(await redis.get(keys[1]!)).toBeNull();
    expect(await redis.get(keys[2]!)).toBe('p2');
    // Marked seen meanwhile: 'seen' even though another owner still holds the lock.
    await seen.add([set], false, [imm(c!)]);
    expect(await seen.claimLocks!(set, false, entries, keys, 'p3', 30_000)).toEqual([
      'seen',
      'locked',
      'seen',
    ]);
    // An expired lock can be taken again.
    const short = [`${prefix}:short`];
    expect(await seen.claimLocks!(set, false, [imm('odd-x')], short, 'p1', 50)).toEqual(['locked']);
    expect(await seen.claimLocks!(set, false, [imm('odd-x')], short, 'p2', 50)).toEqual(['busy']);
    await new Promise((r) => setTimeout(r, 120));
    expect(await seen.claimLocks!(set, false, [imm('odd-x')], short, 'p2', 50)).toEqual(['locked']);
  });

  it('changing resources: claimLocks answers "seen" for the same or an older version, locks a newer one', async () => {
    const seen = createRedisSeenSet(redis);
    const set = `${prefix}:seen:claims-users`;
    const [u] = objectIds(1);
    await seen.add([set], true, [{ id: u!, version: at(10) }]);
    const ask = (s: number, owner: string): Promise<string[]> =>
      seen.claimLocks!(set, true, [{ id: u!, version: at(s) }], [`${prefix}:lu:${s}`], owner, 30_000);
    expect(await ask(9, 'p')).toEqual(['seen']);
    expect(await ask(10, 'p')).toEqual(['seen']);
    expect(await ask(11, 'p')).toEqual(['locked']);
  });
});
