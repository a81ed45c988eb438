import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createMemoryPendingMarks,
  createPendingMarks,
  pageCommitted,
  pageKeyOf,
  parsePageKey,
  type MemoryPendingMarks,
} from '../../../../src/pipeline/dedup/index.js';
import { ConfigError, GamedataError } from '../../../../src/foundation/errors/index.js';
import { modelId, runModel, seededRandom } from './pending-marks-model.js';

const tx = (n: number): { _id: string } => ({ _id: modelId(n) });
const user = (n: number, day: number): { _id: string; updatedAt: string } => ({
  _id: modelId(n),
  updatedAt: new Date(Date.UTC(2026, 0, day)).toISOString(),
});
const never = (): Promise<boolean> => Promise.reject(new Error('no page should need resolving'));

/** A memory backend on a clock the test moves. */
function setup(leaseMs = 1000): {
  backend: MemoryPendingMarks;
  marks: ReturnType<typeof createPendingMarks>;
  clock: { t: number };
} {
  const clock = { t: 1_000_000 };
  const backend = createMemoryPendingMarks({ now: () => clock.t });
  return { backend, clock, marks: createPendingMarks(backend, { prefix: 't', leaseMs, pollMs: 1 }) };
}

describe('pending marks (memory backend)', () => {
  it('claim -> intent -> settle(committed): the ids are seen, no lock and no intent is left', async () => {
    const { backend, marks } = setup();
    const c = await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1), tx(2), tx(1), { x: 1 }], never);
    expect(c.fresh).toEqual([tx(1), tx(2), { x: 1 }]);
    expect(c.repeats).toBe(1);
    expect(c.page).toEqual({
      pageKey: 'A#0',
      seq: 0,
      resource: 'transactions',
      entries: [
        { id: modelId(1), version: '' },
        { id: modelId(2), version: '' },
      ],
    });
    expect([...backend.locks.values()]).toEqual([`A#0|1001000|`, `A#0|1001000|`]);
    await marks.writeIntent('A', c.page);
    expect(await marks.readIntent('A')).toEqual([c.page]);
    await marks.settle('A', [c.page], true);
    expect(backend.locks.size).toBe(0);
    expect(await marks.readIntent('A')).toEqual([]);
    const again = await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(1), tx(3)], never);
    expect(again.fresh).toEqual([tx(3)]);
  });

  it('the intent lists every page of the open transaction, by seq; settle removes only the pages it settles', async () => {
    const { marks } = setup();
    const pages = [];
    for (const seq of [2, 0, 1]) {
      const c = await marks.claim(pageKeyOf('S', seq), 'transactions', [tx(seq)], never);
      await marks.writeIntent('S', c.page);
      pages[seq] = c.page;
    }
    expect((await marks.readIntent('S')).map((p) => p.seq)).toEqual([0, 1, 2]);
    await marks.settle('S', [pages[0]!, pages[1]!], true);
    expect((await marks.readIntent('S')).map((p) => p.seq)).toEqual([2]);
  });

  it('a second slice waits for a live page, then sees its outcome: committed -> repeats, void -> fresh', async () => {
    for (const committed of [true, false]) {
      const { backend, marks } = setup();
      const a = await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1), tx(2)], never);
      let waits = 0;
      const b = marks.claim(pageKeyOf('B', 0), 'transactions', [tx(2), tx(3)], never, {
        onWait: () => Promise.resolve(void waits++),
      });
      await new Promise((r) => setTimeout(r, 20));
      await marks.settle('A', [a.page], committed);
      const got = await b;
      expect(got.fresh).toEqual(committed ? [tx(3)] : [tx(2), tx(3)]);
      expect(waits).toBe(1);
      expect([...backend.locks.values()].every((v) => v.startsWith('B#0|'))).toBe(true);
    }
  });

  it('an expired page is resolved once per page: committed -> its ids are marked seen; void -> the claimer takes them', async () => {
    for (const committed of [true, false]) {
      const { backend, marks, clock } = setup(1000);
      await marks.claim(pageKeyOf('A', 3), 'transactions', [tx(1), tx(2)], never);
      await marks.claim(pageKeyOf('C', 0), 'transactions', [tx(4)], never);
      clock.t += 1001;
      const asked: string[] = [];
      const b = await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(1), tx(2), tx(3), tx(4)], (pk) => {
        asked.push(pk);
        return Promise.resolve(committed);
      });
      expect(asked.sort()).toEqual(['A#3', 'C#0']);
      expect(b.fresh).toEqual(committed ? [tx(3)] : [tx(1), tx(2), tx(3), tx(4)]);
      expect(
        await backend.claim({ ...probe, locks: ['x'], entries: [{ id: modelId(1), version: '' }] }),
      ).toEqual([{ state: committed ? 'seen' : 'mine' }]);
    }
  });

  it('changing resources: one lock per entity; a foreign page resolved as committed is marked at ITS version', async () => {
    const { marks, clock } = setup(1000);
    // A publishes entity 1 at day 5 and dies after its commit.
    const a = await marks.claim(pageKeyOf('A', 0), 'users', [user(1, 5)], never);
    expect(a.page.entries).toEqual([{ id: modelId(1), version: user(1, 5).updatedAt }]);
    clock.t += 1001;
    // B reads day 3 (older) and day 9 (newer) versions of entities 1 and 1: the latest in the page wins.
    const b = await marks.claim(pageKeyOf('B', 0), 'users', [user(1, 3)], () => Promise.resolve(true));
    expect(b.fresh).toEqual([]);
    const c = await marks.claim(pageKeyOf('C', 0), 'users', [user(1, 9), user(1, 7)], never);
    expect(c.fresh).toEqual([user(1, 9)]);
    expect(c.repeats).toBe(1);
    await marks.settle('C', [c.page], true);
    const d = await marks.claim(pageKeyOf('D', 0), 'users', [user(1, 9), user(1, 8), user(2, 1)], never);
    expect(d.fresh).toEqual([user(2, 1)]);
  });

  it('compare-and-delete: a zombie settling its page never deletes a lock another page took over', async () => {
    const { backend, marks, clock } = setup(1000);
    const a = await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1), tx(2)], never);
    clock.t += 1001;
    const b = await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(1)], () => Promise.resolve(false));
    expect(b.fresh).toEqual([tx(1)]);
    // The zombie wakes and settles (either way): B's lock on 1 stays; A's own lock on 2 goes.
    await marks.settle('A', [a.page], false);
    expect([...backend.locks.entries()]).toEqual([
      ['t:lock:transactions/' + modelId(1), expect.stringMatching(/^B#0\|/)],
    ]);
    const c = marks.claim(pageKeyOf('C', 0), 'transactions', [tx(1)], never);
    await new Promise((r) => setTimeout(r, 10));
    await marks.settle('B', [b.page], true);
    expect((await c).fresh).toEqual([]);
    expect(backend.locks.size).toBe(0);
  });

  it("a page re-run by its slice's next owner takes back its own locks (same page key), even expired", async () => {
    const { marks, clock } = setup(1000);
    await marks.claim(pageKeyOf('A', 4), 'transactions', [tx(1)], never);
    clock.t += 5000;
    const again = await marks.claim(pageKeyOf('A', 4), 'transactions', [tx(1), tx(2)], never);
    expect(again.fresh).toEqual([tx(1), tx(2)]);
  });

  it('a claim that waits keeps the locks before the one it waits for (lock order) and takes none after it; crosswise pages finish', async () => {
    const { backend, marks } = setup(60_000);
    const lock = (n: number) => backend.locks.get('t:lock:transactions/' + modelId(n));
    // A holds 1 and B holds 2; A's next page wants 0, 2 and 3, B's wants 1 and 4.
    const a0 = await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1)], never);
    const b0 = await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(2)], never);
    const a1 = marks.claim(pageKeyOf('A', 1), 'transactions', [tx(3), tx(2), tx(0)], never);
    const b1 = marks.claim(pageKeyOf('B', 1), 'transactions', [tx(4), tx(1)], never);
    await new Promise((r) => setTimeout(r, 30));
    expect(lock(0)).toMatch(/^A#1\|/); // before the one it waits for: kept
    expect(lock(3)).toBeUndefined(); // after it: not taken
    expect(lock(4)).toBeUndefined();
    await marks.settle('A', [a0.page], true);
    await marks.settle('B', [b0.page], true);
    const [ra, rb] = await Promise.all([a1, b1]);
    expect(ra.fresh).toEqual([tx(3), tx(0)]); // 2 was published by B's page 0
    expect(rb.fresh).toEqual([tx(4)]);
  });

  it('many pages over the same ids in every order: all finish, each id fresh for exactly one page, no lock left', async () => {
    const { backend, marks } = setup(60_000);
    const random = seededRandom(7);
    const fresh = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 40 }, async (_, p) => {
        const ids = Array.from({ length: 40 }, (_, i) => i)
          .sort(() => random() - 0.5)
          .slice(0, 15);
        const claim = await marks.claim(pageKeyOf(`S${p}`, 0), 'transactions', ids.map(tx), never);
        for (const r of claim.fresh) fresh.set(r._id, (fresh.get(r._id) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, random() * 5)); // the page commits
        await marks.settle(`S${p}`, [claim.page], true);
      }),
    );
    expect([...fresh.values()].every((n) => n === 1)).toBe(true);
    expect(backend.locks.size).toBe(0);
  });

  it('pages that each need what the other holds, none settled until both claims return, still finish', async () => {
    const { marks } = setup(60_000);
    // A page's claim returns only when all its ids are its own; the two pages list them in opposite orders. Both take
    // them in lock order, so the one that takes 1 first gets them all and the other waits at 1, holding nothing.
    const ids = [tx(1), tx(2), tx(3), tx(4)];
    const a = marks.claim(pageKeyOf('A', 0), 'transactions', ids, never);
    const b = marks.claim(pageKeyOf('B', 0), 'transactions', [...ids].reverse(), never);
    const first = await Promise.race([a.then(() => 'A'), b.then(() => 'B')]);
    const winner = first === 'A' ? await a : await b;
    expect(winner.fresh).toHaveLength(4);
    await marks.settle(first, [winner.page], true);
    const loser = first === 'A' ? await b : await a;
    expect(loser.fresh).toEqual([]);
    expect(loser.repeats).toBe(4);
  });

  it('--replay scope: checks the scoped set, marks both, locks apart from the global ones', async () => {
    const { marks } = setup();
    const g = await marks.claim(pageKeyOf('G', 0), 'transactions', [tx(1)], never);
    await marks.settle('G', [g.page], true);
    const r = await marks.claim(pageKeyOf('R', 0), 'transactions', [tx(1), tx(2)], never, { scope: 'run7' });
    expect(r.fresh).toEqual([tx(1), tx(2)]);
    expect(r.page.scope).toBe('run7');
    await marks.writeIntent('R', r.page);
    expect((await marks.readIntent('R'))[0]!.scope).toBe('run7');
    await marks.settle('R', [r.page], true);
    const again = await marks.claim(pageKeyOf('R2', 0), 'transactions', [tx(1), tx(2)], never, {
      scope: 'run7',
    });
    expect(again.fresh).toEqual([]);
    const global = await marks.claim(pageKeyOf('G2', 0), 'transactions', [tx(2)], never);
    expect(global.fresh).toEqual([]);
  });

  it('bad input gives one clear error', async () => {
    const { marks } = setup();
    expect(() => createPendingMarks(createMemoryPendingMarks(), { leaseMs: 0 })).toThrow(ConfigError);
    expect(() => createPendingMarks(createMemoryPendingMarks(), { prefix: '' })).toThrow(/prefix/);
    expect(() => parsePageKey('no-seq')).toThrow(GamedataError);
    expect(parsePageKey('run/a#b#12')).toEqual({ sliceKey: 'run/a#b', seq: 12 });
    // The writer: the transactional.id whose transaction the page goes into.
    expect(parsePageKey(pageKeyOf('run/a#b', 12, 'gd.tx.m0.0'))).toEqual({
      sliceKey: 'run/a#b',
      seq: 12,
      writer: 'gd.tx.m0.0',
    });
    // The session: which owner's run of the slice wrote the page.
    expect(parsePageKey(pageKeyOf('run/a#b', 12, 'gd.tx.m0.0', '0a1b2c3d4e5f'))).toEqual({
      sliceKey: 'run/a#b',
      seq: 12,
      writer: 'gd.tx.m0.0',
      session: '0a1b2c3d4e5f',
    });
    // ... and where its checkpoints start in the checkpoint partition (the resolver reads from there).
    expect(parsePageKey(pageKeyOf('run/a', 3, 'gd.tx.m0.0', 'ab12', '40961'))).toEqual({
      sliceKey: 'run/a',
      seq: 3,
      writer: 'gd.tx.m0.0',
      session: 'ab12',
      readFrom: '40961',
    });
    expect(() => parsePageKey('run/a#12@w|x')).toThrow(GamedataError);
    await expect(marks.claim('a|b#1', 'transactions', [], never)).rejects.toThrow(/without "\|"/);
    await expect(marks.claim('a#1', 'transactions', [], never, { scope: 'x/y' })).rejects.toThrow(/scope/);
    const c = await marks.claim('a#1', 'transactions', [tx(1)], never);
    await expect(marks.writeIntent('b', c.page)).rejects.toThrow(/not a page of slice "b"/);
  });

  it('pageCommitted: only the session that wrote the checkpoint committed a page, up to its seq; old keys by seq alone', () => {
    const page = (seq: number, session?: string) => ({ seq, ...(session === undefined ? {} : { session }) });
    expect(pageCommitted(page(3, 'a'), { seq: 5, session: 'a' })).toBe(true);
    expect(pageCommitted(page(5, 'a'), { seq: 5, session: 'a' })).toBe(true);
    expect(pageCommitted(page(6, 'a'), { seq: 5, session: 'a' })).toBe(false);
    // Another session's checkpoint at or past the seq: the page's own session never committed it.
    expect(pageCommitted(page(3, 'a'), { seq: 9, session: 'b' })).toBe(false);
    expect(pageCommitted(page(3, 'a'), { seq: 9 })).toBe(false);
    expect(pageCommitted(page(3, 'a'), null)).toBe(false);
    expect(pageCommitted(page(3), { seq: 3, session: 'b' })).toBe(true);
    expect(pageCommitted(page(4), { seq: 3 })).toBe(false);
  });

  it('property: zombies (owners stalled past a takeover, claiming pages they cannot commit) while pages shift between sessions -> every id exactly once, nothing left', async () => {
    // With the old rule (committed iff the checkpoint's seq >= the page's, whoever wrote it) 3 of 150 such runs lost
    // ids: a zombie's page, resolved after its successor committed past that seq with other rows (2026-12-02).
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 }), async (seed) => {
        const backend = createMemoryPendingMarks();
        const marks = createPendingMarks(backend, { prefix: 'p', leaseMs: 5, pollMs: 1 });
        const run = await runModel(marks, {
          slices: 3,
          pages: 6,
          perPage: 6,
          pagesPerTxn: 1,
          crashRate: 0.05,
          windowCrashRate: 0.3,
          deadForMs: 15,
          random: seededRandom(seed),
          shifting: true,
          stallRate: 0.2,
        });
        for (const id of run.expected) expect(run.published.get(id), id).toBe(1);
        expect(run.published.size).toBe(run.expected.size);
        expect(backend.locks.size).toBe(0);
        expect(backend.intents.size).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it('property: overlapping slices, several pages per transaction, owners dying at any step, pages shifting between sessions, writer ids shared -> every id exactly once, nothing left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(0, 0.05, 0.15),
        fc.boolean(),
        async (seed, slices, pagesPerTxn, crashRate, shifting) => {
          const backend = createMemoryPendingMarks();
          const marks = createPendingMarks(backend, { prefix: 'p', leaseMs: 5, pollMs: 1 });
          const run = await runModel(marks, {
            slices,
            pages: 6,
            perPage: 6,
            pagesPerTxn,
            crashRate,
            windowCrashRate: crashRate === 0 ? 0 : 0.3,
            deadForMs: 15,
            random: seededRandom(seed),
            shifting,
            stallRate: crashRate === 0 ? 0 : 0.05,
          });
          for (const id of run.expected) expect(run.published.get(id), id).toBe(1);
          expect(run.published.size).toBe(run.expected.size);
          expect(backend.locks.size).toBe(0);
          expect(backend.intents.size).toBe(0);
        },
      ),
      { numRuns: 40 },
    );
  });
});

const probe = { set: 't:seen:transactions', versioned: false, pageKey: 'probe#0', leaseMs: 1 };
