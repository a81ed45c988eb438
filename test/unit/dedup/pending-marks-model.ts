/**
 * A model of exactly-once publishing around the pending-marks protocol, for unit (memory backend) and integration
 * (Redis) tests: slices whose pages overlap (a trade read under its buyer and its seller), a fake Kafka with
 * transactions and per-slice fencing (InitProducerId bumps the epoch: an older session's commit fails), several
 * pages per transaction, and owners that die at any step (claims, intents or committed pages left behind). Every
 * owner follows the order of EOS design 2.7: fence, recover from the committed checkpoint, settle its intent, then
 * per page claim -> intent -> add to the transaction -> commit -> settle.
 */
import { SliceFencedError } from '../../../src/foundation/errors.js';
import {
  pageKeyOf,
  parsePageKey,
  type PendingMarks,
  type PendingPage,
} from '../../../src/pipeline/dedup/index.js';

export interface ModelRun {
  /** How many times each id reached the "topic" through a committed transaction. */
  published: Map<string, number>;
  /** Every id some page of some slice holds. */
  expected: Set<string>;
  crashes: number;
  fenced: number;
  resolutions: { committed: number; void: number };
}

export interface ModelOptions {
  /** Slices and their pages: slice i page p holds `ids(i, p)`. */
  slices: number;
  pages: number;
  /** Ids per page; consecutive slices overlap by half a page. */
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
}

class Crash extends Error {}

/** An ObjectId-shaped id (so the compact layout is used), distinct per n. */
export function modelId(n: number): string {
  return `65a1b2c3aabbccddee${n.toString(16).padStart(6, '0')}`;
}

/** Runs every slice concurrently to the end (restarting dead or fenced owners) and reports what was published. */
export async function runModel(marks: PendingMarks, o: ModelOptions): Promise<ModelRun> {
  const half = Math.floor(o.perPage / 2);
  const idsOf = (slice: number, page: number): string[] =>
    Array.from({ length: o.perPage }, (_, i) => modelId(page * o.perPage + slice * half + i));
  const kafka = new Map<string, { epoch: number; committedSeq: number }>();
  const published = new Map<string, number>();
  const run: ModelRun = {
    published,
    expected: new Set(),
    crashes: 0,
    fenced: 0,
    resolutions: { committed: 0, void: 0 },
  };
  for (let s = 0; s < o.slices; s++)
    for (let p = 0; p < o.pages; p++) for (const id of idsOf(s, p)) run.expected.add(id);
  const sliceKey = (s: number): string => `run1/slice${s}`;
  const state = (key: string): { epoch: number; committedSeq: number } => {
    const st = kafka.get(key) ?? { epoch: 0, committedSeq: -1 };
    kafka.set(key, st);
    return st;
  };
  /** InitProducerId on the slice's transactional.id: an older session can no longer commit. */
  const fence = (key: string): number => ++state(key).epoch;
  const resolveForeign = async (pageKey: string): Promise<boolean> => {
    await Promise.resolve();
    const { sliceKey: key, seq } = parsePageKey(pageKey);
    fence(key);
    const committed = state(key).committedSeq >= seq;
    if (committed) run.resolutions.committed++;
    else run.resolutions.void++;
    return committed;
  };

  const owner = async (s: number): Promise<'done'> => {
    const key = sliceKey(s);
    const maybeCrash = (): void => {
      if (o.random() < o.crashRate) throw new Crash();
    };
    const epoch = fence(key);
    const committedSeq = state(key).committedSeq;
    // Own recovery: the pages of the transaction that was open when the last owner died.
    const intent = await marks.readIntent(key);
    await marks.settle(
      key,
      intent.filter((p) => p.seq <= committedSeq),
      true,
    );
    maybeCrash();
    await marks.settle(
      key,
      intent.filter((p) => p.seq > committedSeq),
      false,
    );
    let open: { page: PendingPage; ids: string[] }[] = [];
    const commit = async (): Promise<void> => {
      if (open.length === 0) return;
      maybeCrash();
      const st = state(key);
      if (st.epoch !== epoch) throw new SliceFencedError('fenced', key);
      for (const { ids } of open) for (const id of ids) published.set(id, (published.get(id) ?? 0) + 1);
      st.committedSeq = open.at(-1)!.page.seq;
      const pages = open.map((x) => x.page);
      open = [];
      if (o.random() < o.windowCrashRate) throw new Crash();
      await marks.settle(key, pages, true);
    };
    for (let seq = committedSeq + 1; seq < o.pages; seq++) {
      maybeCrash();
      const records = idsOf(s, seq).map((_id) => ({ _id }));
      const claim = await marks.claim(pageKeyOf(key, seq), 'transactions', records, resolveForeign, {
        onWait: commit,
      });
      maybeCrash();
      await marks.writeIntent(key, claim.page);
      maybeCrash();
      open.push({ page: claim.page, ids: claim.fresh.map((r) => r._id) });
      if (open.length >= o.pagesPerTxn || seq === o.pages - 1) await commit();
    }
    await commit();
    return 'done';
  };

  const maxAttempts = o.maxAttempts ?? 200;
  await Promise.all(
    Array.from({ length: o.slices }, async (_, s) => {
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        try {
          await owner(s);
          return;
        } catch (error) {
          if (error instanceof Crash) run.crashes++;
          else if (error instanceof SliceFencedError) run.fenced++;
          else throw error;
          await new Promise((r) => setTimeout(r, o.random() * o.deadForMs));
        }
      }
      throw new Error(`slice ${s} did not finish in ${maxAttempts} attempts`);
    }),
  );
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
