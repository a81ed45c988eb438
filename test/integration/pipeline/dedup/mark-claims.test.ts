/**
 * Claims by mark on the real Redis (`redis-mark-claims.ts`: its Lua scripts on the compact seen-set): marks taken back
 * exactly through bucket splits, the run registry's handshake, a zombie refused, an older page's lock respected, and
 * the model of exactly-once publishing (owners dying at any step, zombies, a second overlapping run, slices given up
 * for good) against the memory backend's rules, id by id.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPendingMarks,
  createRedisPendingMarks,
  createRedisSeenSet,
  createRunRegistry,
  pageKeyOf,
} from '../../../../src/pipeline/dedup/index.js';
import { SliceFencedError } from '../../../../src/foundation/errors/index.js';
import { modelId, runModel, seededRandom } from '../../../unit/pipeline/dedup/pending-marks-model.js';

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const base = `it-marks-${randomUUID().slice(0, 8)}`;
const tx = (n: number): { _id: string } => ({ _id: modelId(n) });
const never = (): Promise<boolean> => Promise.reject(new Error('no page should need resolving'));

describe('claims by mark on real Redis', () => {
  let redis: Redis;
  let n = 0;
  const fresh = (leaseMs = 300) => {
    const prefix = `${base}-${n++}`;
    const backend = createRedisPendingMarks(redis, { bucketEntries: 8 });
    return {
      prefix,
      marks: createPendingMarks(backend, { prefix, leaseMs, pollMs: 5 }),
      runs: createRunRegistry(backend, { prefix }),
      // The seen-set read directly: what is marked, id by id.
      seen: { set: `${prefix}:seen:transactions`, backend: createRedisSeenSet(redis, { bucketEntries: 8 }) },
    };
  };
  const seenIds = async (seen: ReturnType<typeof fresh>['seen'], ids: number[]): Promise<number[]> => {
    const has = await seen.backend.has(
      seen.set,
      false,
      ids.map((i) => ({ id: modelId(i), version: '' })),
    );
    return ids.filter((_, k) => has[k] === true);
  };

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const all = await redis.keys(`${base}*`);
    for (let i = 0; i < all.length; i += 1000) await redis.del(...all.slice(i, i + 1000));
    await redis.quit();
  });

  it('marks at the claim; a page that did not commit takes exactly its own marks back, through bucket splits', async () => {
    const { marks, runs, seen, prefix } = fresh();
    await runs.register({ runId: 'r1', resources: ['transactions'] });
    await marks.openSlice('r1/s1', 'aa');
    // 3 000 ids over 8-entry buckets: the set splits many times between the claims and the settles.
    const pages = Array.from({ length: 30 }, (_, p) => Array.from({ length: 100 }, (_, i) => p * 100 + i));
    const claims = [];
    for (const [p, ids] of pages.entries())
      claims.push(
        await marks.claim(pageKeyOf('r1/s1', p, 'w', 'aa'), 'transactions', ids.map(tx), never, {
          run: 'r1',
        }),
      );
    expect(claims.every((c) => c.page.run === 'r1' && c.fresh.length === 100)).toBe(true);
    expect(await redis.keys(`${prefix}:lock:*`)).toEqual([]);
    // Odd pages did not commit.
    for (const [p, c] of claims.entries()) await marks.settle('r1/s1', [c.page], p % 2 === 0);
    const all = pages.flat();
    expect(await seenIds(seen, all)).toEqual(all.filter((i) => Math.floor(i / 100) % 2 === 0));
    expect(await marks.readIntent('r1/s1')).toEqual([]);
    expect(await redis.zcard(`${prefix}:eos:marking:r1:transactions`)).toBe(0);
    // The set's count followed: 1 500 entries left.
    expect(Number(await redis.hget(`${prefix}:seen:transactions:v2:meta`, 'n'))).toBe(1500);
    // The slice ends: its marks (only the owner is left) expire soon; an older session's close changes nothing.
    expect(await redis.hgetall(`${prefix}:marks:r1/s1`)).toEqual({ owner: 'aa' });
    await marks.closeSlice('r1/s1', 'zz');
    expect(await redis.pttl(`${prefix}:marks:r1/s1`)).toBeGreaterThan(600_000);
    await marks.closeSlice('r1/s1', 'aa');
    const ttl = await redis.pttl(`${prefix}:marks:r1/s1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });

  it('a zombie is refused; an older page`s lock on an unseen id sends the page to locks', async () => {
    const { marks, runs } = fresh();
    await runs.register({ runId: 'r1', resources: ['transactions'] });
    await marks.openSlice('r1/s1', 'aa');
    await marks.openSlice('r1/s1', 'bb');
    await expect(
      marks.claim(pageKeyOf('r1/s1', 0, 'w', 'aa'), 'transactions', [tx(1)], never, { run: 'r1' }),
    ).rejects.toBeInstanceOf(SliceFencedError);
    // A page of locks (no run) holds id 7, live.
    await marks.claim(pageKeyOf('old/s1', 0), 'transactions', [tx(7)], never);
    const got = await marks.claim(pageKeyOf('r1/s1', 0, 'w', 'bb'), 'transactions', [tx(8)], never, {
      run: 'r1',
    });
    expect(got.page.run).toBe('r1');
    const again = await marks.claim(
      pageKeyOf('r1/s1', 1, 'w', 'bb'),
      'transactions',
      [tx(9), tx(7)],
      () => Promise.resolve(true),
      { run: 'r1' },
    );
    expect(again.page.run).toBeUndefined();
    expect(again.fresh.map((r) => r._id)).toEqual([modelId(9)]);
  });

  it('a second overlapping run makes the first share and waits until its marks settled; a disjoint one does not', async () => {
    const { marks, runs, prefix } = fresh();
    await runs.register({ runId: 'r1', resources: ['transactions'], since: 0, until: 1000 });
    await runs.register({ runId: 'r0', resources: ['transactions'], since: 1000, until: 2000 });
    expect(await redis.hget(`${prefix}:eos:runs:transactions`, 'r1')).toBe('0|1000|lone|active');
    await marks.openSlice('r1/s1', 'aa');
    const a = await marks.claim(pageKeyOf('r1/s1', 0, 'w', 'aa'), 'transactions', [tx(1)], never, {
      run: 'r1',
    });
    await runs.register({ runId: 'r2', resources: ['transactions'], since: 500, until: 1500 });
    expect(await redis.hget(`${prefix}:eos:runs:transactions`, 'r1')).toBe('0|1000|shared|active');
    expect(await redis.hget(`${prefix}:eos:runs:transactions`, 'r2')).toBe('500|1500|shared|active');
    await marks.openSlice('r2/s1', 'bb');
    let settledFirst = false;
    const b = marks
      .claim(pageKeyOf('r2/s1', 0, 'w', 'bb'), 'transactions', [tx(1), tx(2)], never, { run: 'r2' })
      .then((c) => ({ c, settledFirst }));
    await new Promise((r) => setTimeout(r, 50));
    settledFirst = true;
    await marks.settle('r1/s1', [a.page], true);
    const got = await b;
    expect(got.settledFirst).toBe(true);
    expect(got.c.fresh.map((r) => r._id)).toEqual([modelId(2)]);
    await runs.retire({ runId: 'r1', resources: ['transactions'] });
    expect(await redis.hexists(`${prefix}:eos:runs:transactions`, 'r1')).toBe(0);
  });

  it('property (seeded): owners dying, zombies, a second overlapping run, slices given up -> what is owed exactly once', async () => {
    let marked = 0;
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { marks, runs } = fresh(40);
      const run = await runModel(marks, {
        slices: 4,
        pages: 5,
        perPage: 8,
        pagesPerTxn: 2,
        crashRate: 0.08,
        windowCrashRate: 0.3,
        deadForMs: 60,
        random: seededRandom(seed),
        shifting: true,
        stallRate: 0.05,
        ...(seed % 2 === 0 ? { abandonRate: 0.5 } : {}),
        runs: { registry: runs, secondAfterMs: (seed % 3) * 20 },
      });
      for (const id of run.owed) expect(run.published.get(id), `${seed} ${id}`).toBe(1);
      for (const [id, k] of run.published) expect(k, `${seed} ${id}`).toBe(1);
      marked += run.markedPages;
    }
    // A second run that registers at once leaves the first nothing to mark; the later ones do.
    expect(marked).toBeGreaterThan(0);
  }, 120_000);
});
