/**
 * The pending-marks protocol on the real Redis (its Lua scripts on the compact seen-set): two slices reading the same
 * ids, owners killed in every window (claims left behind, an intent left behind, expired leases resolved as committed
 * and as not committed), compare-and-delete safety against a zombie, changing resources marked at the resolved
 * page's version, and no lock or intent left after a clean run.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryPendingMarks,
  createPendingMarks,
  createRedisPendingMarks,
  createRedisSeenSet,
  pageKeyOf,
  type PendingMarks,
} from '../../../../src/pipeline/dedup/index.js';
import { modelId, runModel, seededRandom } from '../../../unit/pipeline/dedup/pending-marks-model.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const base = `it-pending-${randomUUID().slice(0, 8)}`;
const tx = (n: number): { _id: string } => ({ _id: modelId(n) });
const user = (n: number, day: number): { _id: string; updatedAt: string } => ({
  _id: modelId(n),
  updatedAt: new Date(Date.UTC(2026, 0, day)).toISOString(),
});
const never = (): Promise<boolean> => Promise.reject(new Error('no page should need resolving'));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('pending marks on real Redis', () => {
  let redis: Redis;
  let n = 0;
  /** A fresh prefix per test, so each starts from empty seen-sets. */
  const fresh = (leaseMs = 300): { marks: PendingMarks; prefix: string } => {
    const prefix = `${base}-${n++}`;
    return {
      prefix,
      marks: createPendingMarks(createRedisPendingMarks(redis), { prefix, leaseMs, pollMs: 5 }),
    };
  };
  const keys = (match: string): Promise<string[]> => redis.keys(match);

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const all = await redis.keys(`${base}*`);
    for (let i = 0; i < all.length; i += 1000) await redis.del(...all.slice(i, i + 1000));
    await redis.quit();
  });

  it('the sweep settles orphaned locks found by SCAN, under its own prefix only (issue 47)', async () => {
    const { marks, prefix } = fresh(50);
    const other = fresh(50);
    // 1 200 orphaned locks (SCAN walks them in several steps), of a page that committed, and one of another prefix.
    const records = Array.from({ length: 1200 }, (_, i) => tx(i));
    await marks.claim(pageKeyOf('lost', 0), 'transactions', records, never);
    await other.marks.claim(pageKeyOf('lost', 0), 'transactions', [tx(1)], never);
    await sleep(120);
    const asked: string[] = [];
    const report = await marks.sweep(
      (pageKey) => {
        asked.push(pageKey);
        return Promise.resolve(true);
      },
      { graceMs: 50 },
    );
    expect(report).toEqual({ scanned: 1200, expired: 1200, committed: 1200, released: 0, left: 0 });
    expect(asked).toEqual(['lost#0']);
    expect(await keys(`${prefix}:lock:*`)).toEqual([]);
    expect(await keys(`${other.prefix}:lock:*`)).toHaveLength(1);
    const again = await marks.claim(pageKeyOf('next', 0), 'transactions', [tx(5), tx(1200)], never);
    expect(again.fresh).toEqual([tx(1200)]);
  });

  it('two slices read the same ids at once: each id is fresh for exactly one; no lock or intent left', async () => {
    const { marks, prefix } = fresh(10_000);
    const published: string[] = [];
    const slice = async (name: string, from: number): Promise<void> => {
      for (let seq = 0; seq < 5; seq++) {
        const records = Array.from({ length: 20 }, (_, i) => tx(from + seq * 20 + i));
        const c = await marks.claim(pageKeyOf(name, seq), 'transactions', records, never);
        await marks.writeIntent(name, c.page);
        await sleep(5); // the transaction
        published.push(...c.fresh.map((r) => r._id));
        await marks.settle(name, [c.page], true);
      }
    };
    await Promise.all([slice('buyer', 0), slice('seller', 10)]);
    expect(published).toHaveLength(110);
    expect(new Set(published).size).toBe(110);
    expect(await keys(`${prefix}:lock:*`)).toEqual([]);
    expect(await keys(`${prefix}:intent:*`)).toEqual([]);
    const seen = createRedisSeenSet(redis);
    expect(
      (
        await seen.has(
          `${prefix}:seen:transactions`,
          false,
          published.map((id) => ({ id, version: '' })),
        )
      ).every(Boolean),
    ).toBe(true);
  });

  it('locks have no TTL and hold the page key and the lease; the intent is written with the first lock and expires in 7 days', async () => {
    const { marks, prefix } = fresh(30_000);
    await marks.claim(pageKeyOf('run/s1', 7), 'transactions', [tx(1)], never);
    const key = `${prefix}:lock:transactions/${modelId(1)}`;
    expect(await redis.pttl(key)).toBe(-1);
    expect((await marks.readIntent('run/s1')).map((p) => p.seq)).toEqual([7]);
    expect(await redis.pttl(`${prefix}:intent:run/s1`)).toBeGreaterThan(7 * 24 * 3_600_000 - 60_000);
    const [pageKey, until] = (await redis.get(key))!.split('|');
    expect(pageKey).toBe('run/s1#7');
    const [s, us] = await redis.time();
    expect(Number(until) - (Number(s) * 1000 + Math.floor(Number(us) / 1000))).toBeGreaterThan(29_000);
  });

  it('claims left behind (killed before its intent): the next claimer resolves the expired page as not committed and publishes', async () => {
    const { marks, prefix } = fresh(200);
    await marks.claim(pageKeyOf('dead', 0), 'transactions', [tx(1), tx(2)], never);
    const asked: string[] = [];
    const started = Date.now();
    const c = await marks.claim(pageKeyOf('live', 0), 'transactions', [tx(1), tx(2), tx(3)], (pk) => {
      asked.push(pk);
      return Promise.resolve(false);
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(asked).toEqual(['dead#0']);
    expect(c.fresh).toEqual([tx(1), tx(2), tx(3)]);
    await marks.settle('live', [c.page], true);
    expect(await keys(`${prefix}:lock:*`)).toEqual([]);
  });

  it('killed after its commit, before settling: resolved as committed, the ids are marked and not published again', async () => {
    const { marks, prefix } = fresh(200);
    const dead = await marks.claim(pageKeyOf('dead', 3), 'transactions', [tx(1), tx(2)], never);
    await marks.writeIntent('dead', dead.page);
    // ... committed in Kafka, then SIGKILL.
    const c = await marks.claim(pageKeyOf('live', 0), 'transactions', [tx(2), tx(3)], () =>
      Promise.resolve(true),
    );
    expect(c.fresh).toEqual([tx(3)]);
    // The resolver settled only the ids it met (tx 2); the dead slice's next owner settles its intent.
    const intent = await marks.readIntent('dead');
    expect(intent).toEqual([dead.page]);
    await marks.settle('dead', intent, true);
    await marks.settle('live', [c.page], true);
    const again = await marks.claim(pageKeyOf('later', 0), 'transactions', [tx(1), tx(2), tx(3)], never);
    expect(again.fresh).toEqual([]);
    expect(await keys(`${prefix}:lock:*`)).toEqual([]);
    expect(await keys(`${prefix}:intent:*`)).toEqual([]);
  });

  it("an intent left behind: the slice's next owner settles it against the committed checkpoint (void and committed)", async () => {
    const { marks, prefix } = fresh(30_000);
    // Pages 4 and 5 in one transaction; 4 committed with the previous transaction, 5 did not.
    const p4 = await marks.claim(pageKeyOf('s', 4), 'transactions', [tx(4)], never);
    await marks.writeIntent('s', p4.page);
    const p5 = await marks.claim(pageKeyOf('s', 5), 'transactions', [tx(5)], never);
    await marks.writeIntent('s', p5.page);
    const committedSeq = 4;
    const intent = await marks.readIntent('s');
    expect(intent.map((p) => p.seq)).toEqual([4, 5]);
    await marks.settle(
      's',
      intent.filter((p) => p.seq <= committedSeq),
      true,
    );
    await marks.settle(
      's',
      intent.filter((p) => p.seq > committedSeq),
      false,
    );
    expect(await keys(`${prefix}:lock:*`)).toEqual([]);
    expect(await marks.readIntent('s')).toEqual([]);
    // Page 5 is read again by the new owner and published; page 4's id is a repeat.
    const rerun = await marks.claim(pageKeyOf('s', 5), 'transactions', [tx(4), tx(5)], never);
    expect(rerun.fresh).toEqual([tx(5)]);
  });

  it('compare-and-delete: a zombie cannot delete a lock another page took over', async () => {
    const { marks, prefix } = fresh(150);
    const zombie = await marks.claim(pageKeyOf('z', 0), 'transactions', [tx(1), tx(2)], never);
    const taker = await marks.claim(pageKeyOf('t', 0), 'transactions', [tx(1)], () => Promise.resolve(false));
    expect(taker.fresh).toEqual([tx(1)]);
    for (const committed of [false, true]) await marks.settle('z', [zombie.page], committed);
    expect(await redis.get(`${prefix}:lock:transactions/${modelId(1)}`)).toMatch(/^t#0\|/);
    expect(await redis.exists(`${prefix}:lock:transactions/${modelId(2)}`)).toBe(0);
  });

  it('a waiting claim keeps the locks before the one it waits for and none after it; crosswise pages both finish; an expired holder is resolved', async () => {
    // The holder's lease outlives the check below by far: the check waits for the claim to wait, up to most of it.
    const { marks, prefix } = fresh(1_500);
    await marks.claim(pageKeyOf('holder', 0), 'transactions', [tx(9)], never);
    const claimedAt = Date.now();
    let waits = 0;
    const waiting = marks.claim(
      pageKeyOf('w', 0),
      'transactions',
      [tx(12), tx(9), tx(1)],
      () => Promise.resolve(false),
      { onWait: () => Promise.resolve(void (waits += 1)) }, // called once it found 9 held
    );
    const lock = (n: number): string => `${prefix}:lock:transactions/${modelId(n)}`;
    let waited = 0;
    while (waited === 0 && Date.now() - claimedAt < 1_000) {
      await sleep(5);
      waited = waits;
    }
    // In lock order 1 < 9 < 12 (0x0c): 1 is kept while it waits at 9, and 12 is not taken.
    expect({ waited, held1: await redis.exists(lock(1)), held12: await redis.exists(lock(12)) }).toEqual({
      waited: 1,
      held1: 1,
      held12: 0,
    });
    const outcome = await waiting; // holder's lease expired meanwhile: resolved as void, w took 9
    expect(outcome.fresh).toEqual([tx(12), tx(9), tx(1)]);
    await marks.settle('w', [outcome.page], true);
    // Two pages that each want what the other took first.
    const a = marks.claim(pageKeyOf('A', 0), 'transactions', [tx(2), tx(3)], never);
    const b = marks.claim(pageKeyOf('B', 0), 'transactions', [tx(3), tx(2)], never);
    const first = await Promise.race([a.then(() => 'A'), b.then(() => 'B')]);
    const winner = first === 'A' ? await a : await b;
    expect(winner.fresh).toHaveLength(2);
    await marks.settle(first, [winner.page], true);
    const loser = first === 'A' ? await b : await a;
    expect(loser.repeats).toBe(2);
  });

  it('changing resources: a page resolved as committed is marked at the version it published, not the claimer’s', async () => {
    const { marks } = fresh(150);
    const dead = await marks.claim(pageKeyOf('dead', 0), 'users', [user(1, 5), user(2, 5)], never);
    expect(dead.fresh).toHaveLength(2);
    // The claimer reads entity 1 at an older version and entity 2 at a newer one.
    const c = await marks.claim(pageKeyOf('live', 0), 'users', [user(1, 3), user(2, 8)], () =>
      Promise.resolve(true),
    );
    expect(c.fresh).toEqual([user(2, 8)]);
    await marks.settle('live', [c.page], true);
    const later = await marks.claim(
      pageKeyOf('later', 0),
      'users',
      [user(1, 5), user(1, 6), user(2, 8)],
      never,
    );
    expect(later.fresh).toEqual([user(1, 6)]);
    expect(later.repeats).toBe(2);
  });

  it('answers like the memory backend for the same sequence of steps (ObjectIds, odd ids, versions)', async () => {
    const { marks } = fresh(30_000);
    const model = createPendingMarks(createMemoryPendingMarks(), { prefix: 'm', leaseMs: 30_000, pollMs: 5 });
    const pages = [
      [tx(1), { _id: 'odd-1' }, tx(2)],
      [tx(2), { _id: 'odd-1' }, { _id: 42 }, tx(3)],
      [user(1, 2), user(1, 1), { _id: 'odd-user', updatedAt: 'v7' }],
      [user(1, 2), user(1, 3), { _id: 'odd-user', updatedAt: 'v7' }, { _id: 'odd-user', updatedAt: 'v8' }],
    ] as const;
    for (const [seq, recs] of pages.entries()) {
      const resource = seq < 2 ? 'transactions' : 'users';
      const [a, b] = await Promise.all(
        [marks, model].map((m) =>
          m.claim(pageKeyOf('s', seq), resource, recs as readonly Record<string, unknown>[], never),
        ),
      );
      expect(a!.fresh).toEqual(b!.fresh);
      expect(a!.page).toEqual(b!.page);
      await Promise.all([marks.settle('s', [a!.page], true), model.settle('s', [b!.page], true)]);
    }
  });

  it('model run on Redis: overlapping slices, 2 pages per transaction, owners killed at every step (seeds 2, 3: pages shifting between sessions; 3: zombies) -> every id once, 0 locks left', async () => {
    for (const seed of [1, 2, 3]) {
      const { marks, prefix } = fresh(20);
      const run = await runModel(marks, {
        slices: 3,
        pages: 8,
        perPage: 20,
        pagesPerTxn: 2,
        crashRate: 0.04,
        windowCrashRate: 0.3,
        deadForMs: 60,
        random: seededRandom(seed),
        shifting: seed !== 1,
        stallRate: seed === 3 ? 0.1 : 0,
      });
      expect(run.crashes).toBeGreaterThan(0);
      for (const id of run.expected) expect(run.published.get(id), id).toBe(1);
      expect(run.published.size).toBe(run.expected.size);
      expect(await keys(`${prefix}:lock:*`)).toEqual([]);
      expect(await keys(`${prefix}:intent:*`)).toEqual([]);
      console.log(
        `seed ${seed}: ${JSON.stringify({ ...run, published: run.published.size, expected: run.expected.size })}`,
      );
    }
  });
  it('a settle appends its immutable ids unread: through many splits each id is stored once and found, and a copy (a page settled twice) is dropped by the next split (issue 47)', async () => {
    const prefix = `${base}-${n++}`;
    const marks = createPendingMarks(createRedisPendingMarks(redis, { bucketEntries: 4 }), {
      prefix,
      leaseMs: 300,
    });
    const seen = createRedisSeenSet(redis, { bucketEntries: 4 });
    const set = `${prefix}:seen:transactions`;
    const settleFresh = async (from: number, count: number, slice: string): Promise<void> => {
      for (let p = 0; p < count; p += 70) {
        const page = Array.from({ length: Math.min(70, count - p) }, (_, i) => tx(from + p + i));
        const claim = await marks.claim(pageKeyOf(slice, p / 70), 'transactions', page, never);
        expect(claim.fresh).toHaveLength(page.length);
        await marks.settle(slice, [claim.page], true);
      }
    };
    // 4 entries a bucket: 3 500 ids split buckets ~600 times (256 at the start).
    await settleFresh(0, 3500, 'a');
    const entries = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ id: tx(from + i)._id, version: '' }));
    expect((await seen.has(set, false, entries(0, 3500))).every(Boolean)).toBe(true);
    expect((await seen.has(set, false, entries(3500, 3500))).some(Boolean)).toBe(false);
    expect(Number(await redis.hget(`${set}:v2:meta`, 'n'))).toBe(3500);
    const stored = async (): Promise<number> => {
      let bytes = 0;
      for (const key of await redis.keys(`${set}:v2:b:*`)) bytes += await redis.strlen(key);
      return bytes / 8;
    };
    expect(await stored()).toBe(3500);
    // A copy of every bucket's first entry, as a page settled by its resolver and by itself would leave: lookups
    // are unchanged, and splitting every bucket once (twice the ids) leaves each id once.
    const buckets = await redis.keys(`${set}:v2:b:*`);
    for (const key of buckets) {
      const b = await redis.getrangeBuffer(key, 0, 7);
      if (b.length === 8) await redis.append(key, b);
    }
    await redis.hincrby(`${set}:v2:meta`, 'n', buckets.length);
    expect((await seen.has(set, false, entries(0, 3500))).every(Boolean)).toBe(true);
    await settleFresh(3500, 7000, 'b');
    expect((await seen.has(set, false, entries(0, 10_500))).every(Boolean)).toBe(true);
    expect((await seen.has(set, false, entries(10_500, 2000))).some(Boolean)).toBe(false);
    expect(await stored()).toBe(10_500);
    expect(Number(await redis.hget(`${set}:v2:meta`, 'n'))).toBe(10_500);
  });
});
