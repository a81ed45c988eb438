/**
 * A model of exactly-once publishing around the pending-marks protocol, for unit (memory backend) and integration
 * (Redis) tests: slices whose ids overlap (a trade read under its buyer and its seller), a fake Kafka with
 * transactions and per-slice fencing (InitProducerId bumps the epoch: an older session's commit fails), several
 * pages per transaction, and owners that die at any step (claims, intents or committed pages left behind). Every
 * owner follows the order of the protocol: fence, recover from the committed checkpoint, settle its intent by
 * `pageCommitted`, then per page claim (the intent with the first lock) -> add to the transaction -> commit -> settle.
 *
 * Issue 47's extensions: each owner is a session with a token of its own in its page keys and checkpoints; with
 * `shifting`, a slice's pages hold other rows in every session (each reads its slice's ids from the checkpoint's
 * cursor in pages of another size, as new arrivals shift a tail's pages), so a page of a dead session and a
 * committed page of its successor share a seq but not their ids; writer ids come from a pool of two that every slice
 * shares, so the same writer id stands in pages of many sessions (an id passed on to the next holder).
 */
import { SliceFencedError } from '../../../../src/foundation/errors/index.js';
import type { RunRegistry } from '../../../../src/pipeline/dedup/index.js';
import {
  pageCommitted,
  pageKeyOf,
  parsePageKey,
  type PendingMarks,
  type PendingPage,
} from '../../../../src/pipeline/dedup/index.js';

export interface ModelRun {
  /** How many times each id reached the "topic" through a committed transaction. */
  published: Map<string, number>;
  /** Every id some page of some slice holds. */
  expected: Set<string>;
  crashes: number;
  fenced: number;
  resolutions: { committed: number; void: number };
  /** Pages claimed by mark (`mark-claims.ts`), and of locks. */
  markedPages: number;
  lockedPages: number;
  /** Slices given up for good (`abandonRate`). */
  abandoned: number;
  /** The ids the run owes whatever was abandoned: every id of run r2's slices (all ids without `abandonRate`). */
  owed: Set<string>;
}

export interface ModelOptions {
  /** Slices and their ids: slice i reads `pages * perPage` ids, consecutive slices overlapping by all but half a page. */
  slices: number;
  pages: number;
  /** Ids per page (in every session, unless `shifting`). */
  perPage: number;
  /** Pages per transaction. */
  pagesPerTxn: number;
  /** Probability that an owner dies before each step. */
  crashRate: number;
  /** Probability that an owner dies right after a commit, before settling (the window exactly-once is about). */
  windowCrashRate: number;
  /** A seeded random source in [0, 1). */
  random: () => number;
  /** A dead owner's slice restarts after up to this long (past the lease: others meet its locks first). */
  deadForMs: number;
  /** Stop restarting after this many owner attempts per slice. */
  maxAttempts?: number;
  /** Each session reads pages of its own size (perPage - 1 to perPage + 1): rows shift between sessions. */
  shifting?: boolean;
  /**
   * Probability that an owner stalls before a page (a worker stopped past its lock): a new owner takes the slice at
   * once, and the stalled one wakes `deadForMs` later and goes on as a zombie, claiming pages it can no longer commit.
   */
  stallRate?: number;
  /**
   * Runs that claim by mark (`lone-runs.ts`, `mark-claims.ts`): the slices belong to run `r1`, registered before they
   * start; with `secondAfterMs`, the second half of the slices belongs to run `r2`, registered (overlapping r1) and
   * started that long after, so r1 shares from then on and r2 waits for r1's marks first. Both retire at their end.
   */
  runs?: { registry: RunRegistry; secondAfterMs?: number };
  /**
   * Probability that a slice of run r1 whose owner died is given up for good (its attempts spent): its pages claimed
   * and not committed stay behind for others to resolve. Only ids of r2's slices are then owed (`owed`).
   */
  abandonRate?: number;
}

class Crash extends Error {}

/** An ObjectId-shaped id (so the compact layout is used), distinct per n. */
export function modelId(n: number): string {
  return `65a1b2c3aabbccddee${n.toString(16).padStart(6, '0')}`;
}

/** The fake Kafka's state of one slice: its fence epoch and last committed checkpoint. */
interface SliceKafka {
  epoch: number;
  checkpoint: { seq: number; cursor: number; session: string } | null;
}

/** Runs every slice concurrently to the end (restarting dead or fenced owners) and reports what was published. */
export async function runModel(marks: PendingMarks, o: ModelOptions): Promise<ModelRun> {
  const half = Math.floor(o.perPage / 2);
  const idsOf = (slice: number): string[] =>
    Array.from({ length: o.pages * o.perPage }, (_, i) => modelId(slice * half + i));
  const kafka = new Map<string, SliceKafka>();
  const published = new Map<string, number>();
  const run: ModelRun = {
    published,
    expected: new Set(),
    crashes: 0,
    fenced: 0,
    resolutions: { committed: 0, void: 0 },
    markedPages: 0,
    lockedPages: 0,
    abandoned: 0,
    owed: new Set(),
  };
  const second = o.runs?.secondAfterMs !== undefined;
  const runOf = (s: number): string => (second && s >= Math.ceil(o.slices / 2) ? 'r2' : 'r1');
  for (let s = 0; s < o.slices; s++) for (const id of idsOf(s)) run.expected.add(id);
  for (let s = 0; s < o.slices; s++)
    if (o.abandonRate === undefined || runOf(s) === 'r2') for (const id of idsOf(s)) run.owed.add(id);
  const sliceKey = (s: number): string => `${runOf(s)}/slice${s}`;
  const state = (key: string): SliceKafka => {
    const st = kafka.get(key) ?? { epoch: 0, checkpoint: null };
    kafka.set(key, st);
    return st;
  };
  /** InitProducerId of the slice's owners: an older session can no longer commit. */
  const fence = (key: string): number => ++state(key).epoch;
  const resolveForeign = async (pageKey: string): Promise<boolean> => {
    await Promise.resolve();
    const page = parsePageKey(pageKey);
    fence(page.sliceKey);
    const committed = pageCommitted(page, state(page.sliceKey).checkpoint);
    if (committed) run.resolutions.committed++;
    else run.resolutions.void++;
    return committed;
  };
  let sessions = 0;

  const owner = async (s: number, takeover: () => void): Promise<'done'> => {
    const key = sliceKey(s);
    const ids = idsOf(s);
    const session = `${(sessions++).toString(36)}`;
    // Two writer ids shared by every slice: an id stands in pages of many sessions, as a member label passes on.
    const writer = `m${sessions % 2}`;
    const size = o.shifting === true ? Math.max(1, o.perPage - 1 + (sessions % 3)) : o.perPage;
    const maybeCrash = (): void => {
      if (o.random() < o.crashRate) throw new Crash();
    };
    const epoch = fence(key);
    const recovered = state(key).checkpoint;
    // This session is the slice's current one before it reads the intent (claims by mark of older ones are refused).
    if (o.runs !== undefined) await marks.openSlice(key, session);
    // Own recovery: the pages of every earlier session still in the intent, by the committed checkpoint.
    const intent = await marks.readIntent(key);
    const committed = (p: PendingPage): boolean => pageCommitted(parsePageKey(p.pageKey), recovered);
    await marks.settle(key, intent.filter(committed), true);
    maybeCrash();
    await marks.settle(
      key,
      intent.filter((p) => !committed(p)),
      false,
    );
    let open: { page: PendingPage; ids: string[]; cursor: number }[] = [];
    const commit = async (): Promise<void> => {
      if (open.length === 0) return;
      maybeCrash();
      const st = state(key);
      if (st.epoch !== epoch) throw new SliceFencedError('fenced', key);
      for (const page of open) for (const id of page.ids) published.set(id, (published.get(id) ?? 0) + 1);
      const last = open.at(-1)!;
      st.checkpoint = { seq: last.page.seq, cursor: last.cursor, session };
      const pages = open.map((x) => x.page);
      open = [];
      if (o.random() < o.windowCrashRate) throw new Crash();
      await marks.settle(key, pages, true);
    };
    let seq = (recovered?.seq ?? -1) + 1;
    for (let cursor = recovered?.cursor ?? 0; cursor < ids.length; seq++) {
      maybeCrash();
      if (o.random() < (o.stallRate ?? 0)) {
        takeover();
        await new Promise((r) => setTimeout(r, o.deadForMs));
      }
      const next = Math.min(ids.length, cursor + size);
      const records = ids.slice(cursor, next).map((_id) => ({ _id }));
      const claim = await marks.claim(
        pageKeyOf(key, seq, writer, session),
        'transactions',
        records,
        resolveForeign,
        {
          onWait: commit,
          ...(o.runs === undefined ? {} : { run: runOf(s) }),
        },
      );
      if (claim.page.entries.length > 0) {
        if (claim.page.run === undefined) run.lockedPages++;
        else run.markedPages++;
      }
      maybeCrash();
      open.push({ page: claim.page, ids: claim.fresh.map((r) => r._id), cursor: next });
      cursor = next;
      if (open.length >= o.pagesPerTxn || cursor >= ids.length) await commit();
    }
    await commit();
    if (o.runs !== undefined) await marks.closeSlice(key, session);
    return 'done';
  };

  const maxAttempts = o.maxAttempts ?? 200;
  const runners: Promise<void>[] = [];
  /** Owners of slice `s`, one after another while they die; a stalled one hands the slice to a new runner. */
  const runner = async (s: number): Promise<void> => {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      let stalled = false;
      const takeover = (): void => {
        if (stalled) return;
        stalled = true;
        runners.push(runner(s));
      };
      try {
        await owner(s, takeover);
        return;
      } catch (error) {
        if (error instanceof Crash) run.crashes++;
        else if (error instanceof SliceFencedError) run.fenced++;
        else throw error;
        if (stalled) return; // a zombie: its successor runs the slice
        if (runOf(s) === 'r1' && o.random() < (o.abandonRate ?? 0)) {
          run.abandoned++;
          return; // attempts spent: the slice is given up, what it left behind stays
        }
        await new Promise((r) => setTimeout(r, o.random() * o.deadForMs));
      }
    }
    throw new Error(`slice ${s} did not finish in ${maxAttempts} attempts`);
  };
  const registry = o.runs?.registry;
  const slicesOf = (r: string): number[] => [...Array(o.slices).keys()].filter((s) => runOf(s) === r);
  /** Registers run `r`, runs its slices to the end, retires it. */
  const runRun = async (r: string): Promise<void> => {
    await registry?.register({ runId: r, resources: ['transactions'] });
    const mine = slicesOf(r).map((s) => runner(s));
    runners.push(...mine);
    await Promise.all(mine);
  };
  const r1 = runRun('r1');
  const r2 = second
    ? new Promise((r) => setTimeout(r, o.runs?.secondAfterMs)).then(() => runRun('r2'))
    : Promise.resolve();
  await Promise.all([r1, r2]);
  for (let i = 0; i < runners.length; i++) await runners[i];
  await registry?.retire({ runId: 'r1', resources: ['transactions'] });
  if (second) await registry?.retire({ runId: 'r2', resources: ['transactions'] });
  return run;
}

/** A small seeded PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
