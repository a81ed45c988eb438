/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import {
  createDedupStore,
  createMemorySeenSet,
  type DedupRecord,
} from '../../../../src/pipeline/dedup/index.js';
import {
  counterparties,
  discoversUsers,
  processSlice,
  userWalk,
  withUserDiscovery,
  type SliceSource,
  type UserDirectory,
} from '../../../../src/pipeline/slice/index.js';
import type { RunJobData, SliceJobData } from '../../../../src/pipeline/planner/index.js';
import type { PagePublisher } from '../../../../src/pipeline/publish/index.js';
import { planBackfill, type PlannerSource } from '../../../../src/pipeline/planner/index.js';

const uid = (n: number): string => n.toString(16).padStart(24, '0');
const NOW = 10_000_000;

/**
 * Users 1..6 are listed, 7..10 are hidden (listing item without `_id`). Hidden 7 trades with listed 1; hidden 8
 * trades only with hidden 7 (found transitively); hidden 9 trades with listed 2 and also has single-party rows;
 * hidden 10 has only single-party rows and no trade with anyone (undiscoverable by construction: not in the truth
 * this test expects). Every user has single-party rows (wages) the listed users' walks never see.
 */
function world(): { listed: string[]; hidden: string[]; tx: DedupRecord[] } {
  const listed = [1, 2, 3, 4, 5, 6].map(uid);
  const hidden = [7, 8, 9, 10].map(uid);
  const tx: DedupRecord[] = [];
  let t = 300_000; // near the walk's start (0): no dense splits
  const add = (buyer: string, seller?: string): void => {
    const id = `t${String(tx.length).padStart(5, '0')}`;
    tx.push({
      _id: id,
      buyerId: buyer,
      ...(seller === undefined ? { userId: buyer } : { sellerId: seller }),
      createdAt: new Date(t).toISOString(),
    });
    t -= 1000;
  };
  for (let i = 0; i < 40; i++) add(listed[i % 6]!, listed[(i + 1) % 6]);
  for (const u of [...listed, ...hidden]) for (let i = 0; i < 12; i++) add(u); // single-party, many pages
  add(hidden[0]!, listed[0]); // 7 <-> 1
  add(hidden[1]!, hidden[0]); // 8 <-> 7 only
  add(listed[1]!, hidden[2]); // 9 <-> 2
  add(uid(0xabc), undefined); // a user nobody listed and nobody traded with: unreachable
  tx.push({ _id: 'bad', buyerId: 'not-an-id', createdAt: new Date(t).toISOString() }); // malformed party id
  return { listed, hidden, tx };
}

/** Per-user feed (buyer or seller), newest first, 5 per page, cursor = index. */
function userFeed(tx: DedupRecord[]): SliceSource & { pagesRead: number } {
  const src = {
    pagesRead: 0,
    operation: () => 'transaction.getPaginatedTransactions',
    async *readPages(slice: { filters: Record<string, string | string[]> }, o: { cursor?: string }) {
      const u = slice.filters['userId'];
      const rows = tx.filter((r) => r['buyerId'] === u || r['sellerId'] === u);
      for (let i = o.cursor === undefined ? 0 : Number(o.cursor); i < rows.length; i += 5) {
        src.pagesRead += 1;
        const next = i + 5 < rows.length ? String(i + 5) : null;
        yield { items: rows.slice(i, i + 5), cursor: next };
      }
    },
  };
  return src;
}

function memoryDirectory(events: string[]): UserDirectory & { sets: Map<string, Set<string>> } {
  const sets = new Map<string, Set<string>>();
  const set = (runId: string): Set<string> => {
    let s = sets.get(runId);
    if (!s) sets.set(runId, (s = new Set()));
    return s;
  };
  let discovered = 0;
  let unlisted = 0;
  return {
    sets,
    async seed(runId, ids, n) {
      for (const id of ids) set(runId).add(id);
      unlisted = n;
    },
    async add(runId, ids) {
      for (const id of ids) set(runId).add(id);
    },
    async unknown(runId, ids) {
      events.push('unknown');
      return ids.filter((id) => !set(runId).has(id));
    },
    async remember(runId, ids) {
      events.push(`remember ${ids.length}`);
      let n = 0;
      for (const id of ids) {
        if (set(runId).has(id)) continue;
        set(runId).add(id);
        n++;
      }
      discovered += n;
      return n;
    },
    async stats() {
      return { unlistedUsers: unlisted, discoveredUsers: discovered };
    },
  };
}

function recordingPublisher(events: string[]): PagePublisher & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    async publishPage({ records }) {
      events.push(`publish ${records.length}`);
      for (const r of records) sent.push(String((r as DedupRecord)._id));
      return { published: records.length, deadLettered: 0, deadLetters: [] };
    },
  };
}

/** A tiny in-memory "BullMQ": runs every slice of the run, including the spawned ones (ids are unique). */
async function runToCompletion(
  planned: { run: RunJobData; slices: SliceJobData[] },
  deps: {
    source: SliceSource;
    users: UserDirectory;
    publisher: PagePublisher;
    events: string[];
    crashOnce?: string | undefined;
    /** Every id handed to dedup's claim, in order (one owner walk per trade: none twice). */
    claimed?: string[];
  },
): Promise<{ jobs: Map<string, SliceJobData>; spawnCalls: number }> {
  const jobs = new Map<string, SliceJobData>();
  const queue: string[] = [];
  const enqueue = (s: SliceJobData): void => {
    if (jobs.has(s.sliceId)) return; // deterministic job ids: adding again is a no-op
    jobs.set(s.sliceId, s);
    queue.push(s.sliceId);
  };
  planned.slices.forEach(enqueue);
  const store = createDedupStore(createMemorySeenSet());
  const dedup: typeof store = {
    ...store,
    claim: (resource, records, scope) => {
      for (const r of records) deps.claimed?.push(String(r._id));
      return store.claim(resource, records, scope);
    },
  };
  let spawnCalls = 0;
  let crashed = false;
  while (queue.length > 0) {
    const id = queue.shift()!;
    const handle = {
      data: jobs.get(id)!,
      async checkpoint(d: SliceJobData) {
        deps.events.push(`checkpoint ${d.cursor ?? '-'}`);
        jobs.set(id, d);
      },
      async spawn(children: SliceJobData[]) {
        spawnCalls += 1;
        deps.events.push(`spawn ${children.map((c) => c.filters['userId']).join(',')}`);
        children.forEach(enqueue);
        // Simulated crash right after a spawn, before the discovery is remembered and the page checkpointed.
        if (
          !crashed &&
          deps.crashOnce !== undefined &&
          children.some((c) => c.filters['userId'] === deps.crashOnce)
        ) {
          crashed = true;
          throw new Error('crash');
        }
      },
    };
    const source = discoversUsers(planned.run)
      ? withUserDiscovery(deps.source, planned.run, { users: deps.users, spawn: (c) => handle.spawn(c) })
      : deps.source;
    try {
      await processSlice(handle, {
        source,
        dedup,
        publisher: deps.publisher,
        counters: { add: async () => undefined },
      });
    } catch (e) {
      if ((e as Error).message !== 'crash') throw e;
      queue.push(id); // retried from its checkpoint
    }
  }
  return { jobs, spawnCalls };
}

async function plan(
  listed: string[],
  unlisted: number,
): Promise<{ run: RunJobData; slices: SliceJobData[]; users?: { ids: string[]; unlisted: number } }> {
  const src: PlannerSource = {
    probe: () => async () => [],
    countryIds: async () => [],
    userIds: async () => listed,
    userListing: async () => ({ ids: listed, unlisted }),
  };
  // One whole-history slice per user (the plan for requests): this feed ignores slice ranges.
  return planBackfill({ resources: ['transactions'], fullHistory: true, runId: 'run1' }, src, {
    now: () => NOW,
    plan: 'requests',
  });
}

describe('user discovery in per-user transaction walks', () => {
  it('walks hidden users found through any trade with a walked user (transitively): every reachable row once', async () => {
    const { listed, hidden, tx } = world();
    const planned = await plan(listed, hidden.length);
    expect(planned.run.unlistedUsers).toBe(4);
    expect(planned.users?.ids).toEqual(listed);
    const events: string[] = [];
    const users = memoryDirectory(events);
    await users.seed('run1', planned.users!.ids, planned.users!.unlisted);
    const publisher = recordingPublisher(events);
    const source = userFeed(tx);
    const { jobs } = await runToCompletion(planned, { source, users, publisher, events });

    const walked = [...jobs.values()].map((s) => s.filters['userId']);
    expect(walked.sort()).toEqual([...listed, hidden[0], hidden[1], hidden[2]].sort());
    // Exactly the rows of walked users (hidden 10 and the lone 0xabc user traded with nobody walked), each once.
    const reachable = new Set(walked);
    const expected = tx
      .filter((r) => reachable.has(r['buyerId'] as string) || reachable.has(r['sellerId'] as string))
      .map((r) => String(r._id));
    expect(publisher.sent.length).toBe(new Set(publisher.sent).size);
    expect(new Set(publisher.sent)).toEqual(new Set(expected));
    // Without discovery the hidden users' 36 single-party rows (and 8's trade with 7) would be missing.
    expect(expected.length).toBe(40 + 10 * 12 + 3 - 12);
    expect(await users.stats('run1')).toEqual({ unlistedUsers: 4, discoveredUsers: 3 });
    // A discovered walk is a planned user walk: the whole history, depth 0, the planner's slice id scheme.
    const seven = [...jobs.values()].find((s) => s.filters['userId'] === hidden[0])!;
    expect(seven).toMatchObject({ start: 0, end: NOW, depth: 0, resource: 'transactions', replay: false });
    expect(seven.sliceId).toBe(userWalk(planned.run, hidden[0]!).sliceId);
    const plannedOne = planned.slices.find((s) => s.filters['userId'] === listed[0])!;
    expect(userWalk(planned.run, listed[0]!)).toEqual(plannedOne);
  });

  it('one owner walk per trade: every row reaches dedup once, from the walk of its smaller party', async () => {
    const { listed, hidden, tx } = world();
    const planned = await plan(listed, hidden.length);
    const events: string[] = [];
    const users = memoryDirectory(events);
    await users.seed('run1', planned.users!.ids, planned.users!.unlisted);
    const publisher = recordingPublisher(events);
    const claimed: string[] = [];
    await runToCompletion(planned, { source: userFeed(tx), users, publisher, events, claimed });
    // Every trade is read by both parties' walks, but only one of them claims it; the malformed row ('bad': its
    // buyer is not an id) is read by no walk here.
    expect(claimed.length).toBe(new Set(claimed).size);
    expect(new Set(claimed)).toEqual(new Set(publisher.sent));
    expect(publisher.sent.length).toBe(40 + 10 * 12 + 3 - 12);
  });

  it('spawns before the revealing page is checkpointed and remembers only after the spawn; one lookup per page', async () => {
    const { listed, hidden, tx } = world();
    const planned = await plan(listed, hidden.length);
    const events: string[] = [];
    const users = memoryDirectory(events);
    await users.seed('run1', listed, 4);
    const source = userFeed(tx);
    await runToCompletion(planned, { source, users, publisher: recordingPublisher(events), events });
    expect(events.filter((e) => e === 'unknown').length).toBe(source.pagesRead);
    for (let i = 0; i < events.length; i++) {
      if (!events[i]!.startsWith('spawn')) continue;
      expect(events[i + 1]).toMatch(/^remember /);
      // The page that revealed the users is published and checkpointed after both.
      const nextCheckpoint = events.findIndex((e, j) => j > i && e.startsWith('checkpoint'));
      const nextLookup = events.findIndex((e, j) => j > i && e === 'unknown');
      expect(nextCheckpoint).toBeGreaterThan(i + 1);
      if (nextLookup !== -1) expect(nextCheckpoint).toBeLessThan(nextLookup);
    }
  });

  it('a crash between the spawn and the checkpoint loses no discovery (the page is re-read, the spawn repeats)', async () => {
    const { listed, hidden, tx } = world();
    const planned = await plan(listed, hidden.length);
    const events: string[] = [];
    const users = memoryDirectory(events);
    await users.seed('run1', listed, 4);
    const publisher = recordingPublisher(events);
    const { jobs, spawnCalls } = await runToCompletion(planned, {
      source: userFeed(tx),
      users,
      publisher,
      events,
      crashOnce: hidden[0],
    });
    expect([...jobs.values()].map((s) => s.filters['userId']).sort()).toEqual(
      [...listed, hidden[0], hidden[1], hidden[2]].sort(),
    );
    expect(spawnCalls).toBeGreaterThanOrEqual(4); // 7 spawned twice (crash + retry), then 9 and 8
    expect(new Set(publisher.sent).size).toBe(40 + 10 * 12 + 3 - 12);
  });

  it('without a seed it still walks each user once (a discovered listed user has its planned slice id)', async () => {
    const { listed, hidden, tx } = world();
    const planned = await plan(listed, hidden.length);
    const events: string[] = [];
    const users = memoryDirectory(events);
    const publisher = recordingPublisher(events);
    const { jobs } = await runToCompletion(planned, { source: userFeed(tx), users, publisher, events });
    expect(jobs.size).toBe(listed.length + 3);
    expect(publisher.sent.length).toBe(40 + 10 * 12 + 3 - 12);
  });

  it('planned for rounds (one unprobed whole-range slice per user) it publishes the same rows once', async () => {
    const { listed, hidden, tx } = world();
    const time = (r: DedupRecord): number => Date.parse(String(r['createdAt']));
    const rowsOf = (u: string | undefined): DedupRecord[] =>
      tx.filter((r) => r['buyerId'] === u || r['sellerId'] === u);
    const probes: string[] = [];
    const src: PlannerSource = {
      probe: (_resource, filters) => async (before, limit) => {
        probes.push(String(filters['userId'] ?? '?'));
        return rowsOf(filters['userId'] as string | undefined)
          .map(time)
          .filter((t) => t < before)
          .slice(0, limit);
      },
      countryIds: async () => [],
      userIds: async () => listed,
      userListing: async () => ({ ids: listed, unlisted: hidden.length }),
    };
    // Pages of 5: the listed users (12-19 rows each) are busy; their walks are still one slice each, not probed.
    const planned = await planBackfill(
      { resources: ['transactions'], fullHistory: true, runId: 'run1' },
      src,
      {
        now: () => NOW,
        plan: 'rounds',
        pageSize: 5,
      },
    );
    expect(planned.planning.plan).toBe('rounds');
    expect(probes).toEqual([]); // a user's first page is its probe
    expect(planned.slices.map((s) => s.filters['userId'])).toEqual(listed);
    // A feed that honours the slice's range (newest first, 5 per page, cursor = index in the range).
    const source: SliceSource = {
      operation: () => 'transaction.getPaginatedTransactions',
      async *readPages(slice, o) {
        const rows = rowsOf(slice.filters['userId'] as string | undefined).filter(
          (r) => time(r) >= slice.start && time(r) < slice.end,
        );
        for (let i = o.cursor === undefined ? 0 : Number(o.cursor); i < rows.length; i += 5)
          yield { items: rows.slice(i, i + 5), cursor: i + 5 < rows.length ? String(i + 5) : null };
      },
    };
    const events: string[] = [];
    const users = memoryDirectory(events);
    await users.seed('run1', planned.users!.ids, planned.users!.unlisted);
    const publisher = recordingPublisher(events);
    await runToCompletion(planned, { source, users, publisher, events });
    const walked = new Set([...listed, hidden[0], hidden[1], hidden[2]]);
    const expected = tx
      .filter((r) => walked.has(r['buyerId'] as string) || walked.has(r['sellerId'] as string))
      .map((r) => String(r._id));
    expect(publisher.sent.length).toBe(new Set(publisher.sent).size);
    expect(new Set(publisher.sent)).toEqual(new Set(expected));
    expect(expected.length).toBe(40 + 10 * 12 + 3 - 12);
    expect(await users.stats('run1')).toEqual({ unlistedUsers: 4, discoveredUsers: 3 });
  });

  it('reads well-formed party ids only, and discovers only in full-history per-user runs', () => {
    expect(
      counterparties([
        { _id: 'a', buyerId: uid(1), sellerId: uid(2) },
        { _id: 'b', buyerId: uid(2), userId: uid(3) },
        { _id: 'c', buyerId: 'x', sellerId: 42, userId: null },
        { _id: 'd' },
      ]),
    ).toEqual([uid(1), uid(2), uid(3)]);
    const run = { resources: ['transactions' as const], fullHistory: true, filters: {} };
    expect(discoversUsers(run)).toBe(true);
    expect(discoversUsers({ ...run, fullHistory: false })).toBe(false);
    expect(discoversUsers({ ...run, filters: { userId: uid(1) } })).toBe(false);
    expect(discoversUsers({ ...run, resources: ['donations'] })).toBe(false);
  });
});
