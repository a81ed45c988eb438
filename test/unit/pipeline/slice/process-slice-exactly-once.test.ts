/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
// processSlice with exactly-once delivery (deps.eos) on fakes: an in-memory "Kafka" with transactions, checkpoints
// and fencing by epoch, and the pending-marks protocol on its memory backend. Crashes at every step are followed by
// a new owner; the committed log must hold every record exactly once.
import { describe, expect, it } from 'vitest';
import { SliceFencedError } from '../../../../src/foundation/errors/index.js';
import {
  createDedupStore,
  createMemoryPendingMarks,
  createMemorySeenSet,
  createPendingMarks,
  type DedupRecord,
  type PendingMarks,
} from '../../../../src/pipeline/dedup/index.js';
import { processSlice, type SliceSource } from '../../../../src/pipeline/slice/index.js';
import { type SliceCheckpointState } from '../../../../src/pipeline/slice/process-slice-exactly-once.js';
import { READ_AHEAD_PAGES, readSliceAhead } from '../../../../src/pipeline/slice/slice-reader.js';
import { createSliceWalk } from '../../../../src/pipeline/slice/slice-walk.js';
import type { ExactlyOnceDelivery, SlicePage } from '../../../../src/pipeline/slice/slice-contract.js';
import type { PageEncoder, PagePublisher } from '../../../../src/pipeline/publish/index.js';
import type { SliceCheckpoint, SliceSession, TransactionalPage } from '../../../../src/output/kafka/index.js';
import type { RunCounterValues, SliceJobData } from '../../../../src/pipeline/contract/job-types.js';

function world(n: number): DedupRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: `d${String(i).padStart(6, '0')}`,
    createdAt: new Date(1_000_000 + i * 10).toISOString(),
  })).reverse();
}

/** Pages of 7, newest first; `fail(page)` may throw before a page is yielded. */
function source(rows: DedupRecord[], fail: (page: number) => void = () => undefined): SliceSource {
  return {
    operation: () => 'donation.getManyPaginated',
    async *readPages(_slice, o) {
      let i = o.cursor === undefined ? 0 : Number(o.cursor);
      let n = 0;
      while (i < rows.length) {
        fail(n++);
        const items = rows.slice(i, i + 7);
        i += items.length;
        yield { items, cursor: i >= rows.length ? null : String(i) };
      }
    },
  };
}

/** `source(rows)` that awaits `onPage` with each page before handing it on (to count, log or delay it). */
function watched(rows: DedupRecord[], onPage: (page: SlicePage) => unknown): SliceSource {
  return {
    ...source(rows),
    async *readPages(slice, o) {
      for await (const page of source(rows).readPages(slice, o)) {
        await onPage(page);
        yield page;
      }
    },
  };
}

/** Committed topic contents, checkpoints by slice, fencing by epoch: what read_committed readers see. */
function fakeKafka(
  hooks: { beforeCommit?: (seq: number) => void; holdCommit?: (seq: number) => Promise<void> } = {},
) {
  const log: string[] = [];
  const checkpoints = new Map<string, SliceCheckpoint<SliceCheckpointState>>();
  const epochs = new Map<string, number>();
  const live = new Set<string>();
  let offset = 0;
  const fence = (k: string): number => {
    const e = (epochs.get(k) ?? 0) + 1;
    epochs.set(k, e);
    return e;
  };
  const publisher: ExactlyOnceDelivery['publisher'] = {
    async openSlice<S>(sliceKey: string, o?: { readFrom?: () => Promise<string | undefined> }) {
      const epoch = fence(sliceKey);
      const readFrom = await o?.readFrom?.();
      const recovered = readFrom === undefined ? null : (checkpoints.get(sliceKey) ?? null);
      let nextSeq = recovered === null ? 0 : recovered.seq + 1;
      let committedSeq = nextSeq - 1;
      let pending: TransactionalPage[] = [];
      const token = `s${epoch}`;
      live.add(token);
      const session: SliceSession<SliceCheckpointState> = {
        recovered,
        owner: `fake.${epoch}`,
        token,
        get nextSeq() {
          return nextSeq;
        },
        get pendingPages() {
          return pending.length;
        },
        addPage(p) {
          pending.push(p);
          return nextSeq++;
        },
        async commit(state) {
          const seq = nextSeq - 1;
          hooks.beforeCommit?.(seq);
          await hooks.holdCommit?.(seq);
          if (epochs.get(sliceKey) !== epoch) {
            pending = [];
            nextSeq = committedSeq + 1;
            throw new SliceFencedError(`fenced ${sliceKey}`, sliceKey);
          }
          for (const p of pending) for (const m of p.records) log.push(String(m.key));
          pending = [];
          committedSeq = seq;
          const ck = { sliceKey, seq, state, session: token, partition: 0, offset: String(offset++) };
          checkpoints.set(sliceKey, ck);
          return ck;
        },
        async close() {
          pending = [];
          live.delete(token);
        },
      };
      return session as unknown as SliceSession<S>;
    },
    sessionLive: (token) => live.has(token),
    async fence(sliceKey) {
      fence(sliceKey);
    },
    // A writer of an older epoch is fenced already (its successor's open did it); the current one is fenced now.
    async fenceWriter(sliceKey, writer) {
      if (writer === `fake.${epochs.get(sliceKey) ?? 0}`) fence(sliceKey);
    },
    async readCommitted<S>(sliceKey: string, readFrom?: string) {
      const ck = checkpoints.get(sliceKey) ?? null;
      // A read from `readFrom` sees the checkpoint only when it lies there or later (as Kafka's would).
      return (
        ck !== null && readFrom !== undefined && Number(ck.offset) < Number(readFrom) ? null : ck
      ) as SliceCheckpoint<S> | null;
    },
    async lastStableOffset() {
      return String(offset);
    },
  };
  return { log, checkpoints, publisher, fence };
}

const encode: PageEncoder = async ({ records }) => ({
  topic: 'g.donations',
  dlqTopic: 'g.donations.dlq',
  records: records.map((r) => ({ key: String((r as DedupRecord)._id), value: 'v', headers: {} })),
  deadLetterMessages: [],
  deadLetters: [],
});

const unused: PagePublisher = {
  publishPage: () => Promise.reject(new Error('the at-least-once publisher must not be used')),
};

function counterSink() {
  const total: RunCounterValues = { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };
  return {
    total,
    async add(_run: string, d: Partial<RunCounterValues>) {
      for (const k of Object.keys(total) as (keyof RunCounterValues)[]) total[k] += d[k] ?? 0;
    },
  };
}

/** Counters with `addThrough`: what each slice counted is kept beside the totals (as RunCounters does in Redis). */
function throughCounterSink() {
  const sink = counterSink();
  const bySlice = new Map<string, RunCounterValues>();
  return {
    ...sink,
    async addThrough(run: string, sliceId: string, cumulative: RunCounterValues) {
      const prev = bySlice.get(sliceId) ?? { fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 };
      const added = { ...prev };
      for (const k of Object.keys(prev) as (keyof RunCounterValues)[])
        added[k] = Math.max(0, cumulative[k] - prev[k]);
      bySlice.set(sliceId, { ...cumulative });
      await sink.add(run, added);
      return added;
    },
  };
}

/** A BullMQ job whose data survives its owners (as in Redis). */
function store(data: SliceJobData) {
  const s = { data, checkpoints: 0 };
  const handle = () => ({
    data: s.data,
    async checkpoint(d: SliceJobData) {
      s.checkpoints += 1;
      s.data = d;
    },
    async spawn() {},
    async reload() {
      return s.data;
    },
  });
  return { s, handle };
}

/** The fake world's density would split the slice (tested for the at-least-once path). */
const NO_SPLIT = { targetRows: 1_000_000 };

const base: SliceJobData = {
  runId: 'r1',
  sliceId: 'r1.s1',
  resource: 'donations',
  filters: {},
  start: 0,
  end: 10_000_000,
  replay: false,
  depth: 0,
};

function deps(
  kafka: ReturnType<typeof fakeKafka>,
  marks: PendingMarks,
  src: SliceSource,
  counters = counterSink(),
  bookMs = 0,
) {
  return {
    counters,
    deps: {
      source: src,
      dedup: createDedupStore(createMemorySeenSet()),
      publisher: unused,
      counters,
      eos: {
        publisher: kafka.publisher,
        encode,
        marks,
        pagesPerTransaction: 3,
        transactionMs: 60_000,
        bookMs,
      },
    },
  };
}

/** A fake Kafka whose first commit waits for `release()` (a worker whose CPU other slices hold); commits go to `events`. */
function heldFirstCommit(events: string[]) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let commits = 0;
  const kafka = fakeKafka({
    beforeCommit: (seq) => events.push(`commit ${seq}`),
    holdCommit: () => (commits++ === 0 ? held : Promise.resolve()),
  });
  return { kafka, release: () => release() };
}

/** Waits until `done()` holds (at most ~200 ms). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 2));
}

/** A slice reader of `src` over `base` whose walk never splits. */
function unsplitReader(src: SliceSource, ahead?: number) {
  const { deps: d } = deps(fakeKafka(), createPendingMarks(createMemoryPendingMarks()), src);
  return readSliceAhead({
    deps: d,
    data: base,
    walk: createSliceWalk({
      targetRows: 1e6,
      splitFactor: 2,
      maxSplitParts: 8,
      maxDepth: 6,
      minPagesBeforeSplit: 2,
    }),
    spawn: async () => undefined,
    now: () => Date.now(),
    ...(ahead === undefined ? {} : { ahead }),
  });
}

describe('processSlice with exactly-once delivery', () => {
  it('commits K pages per transaction; the log holds every record once; counters and job data follow', async () => {
    const rows = world(100); // 15 pages of 7 (the last holds 2)
    const kafka = fakeKafka();
    const backend = createMemoryPendingMarks();
    const { deps: d, counters } = deps(kafka, createPendingMarks(backend), source(rows));
    const { s, handle } = store(base);
    const r = await processSlice(handle(), d, { targetRows: 1_000_000 });
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(r).toMatchObject({ fetched: 100, published: 100, pages: 15 });
    expect(counters.total).toEqual({ fetched: 100, published: 100, deduplicated: 0, deadLettered: 0 });
    // 15 pages in transactions of 3: five commits, the last one marks the slice done.
    expect(kafka.checkpoints.get('r1.s1')).toMatchObject({ seq: 14, state: { done: true, pages: 15 } });
    expect(s.data.eos).toMatchObject({ readFrom: '4', counted: counters.total });
    expect(backend.locks.size).toBe(0);
    expect([...backend.intents.values()].every((m) => m.size === 0)).toBe(true);
    // Done: a rerun of the slice publishes nothing and counts nothing again.
    await processSlice(handle(), d, { targetRows: 1_000_000 });
    expect(kafka.log).toHaveLength(100);
    expect(counters.total.published).toBe(100);
  });

  it('counters and job data follow the commits at most every bookMs: booked once at the end, and exact', async () => {
    const rows = world(100);
    const kafka = fakeKafka();
    const backend = createMemoryPendingMarks();
    const counted: number[] = [];
    const inner = counterSink();
    const counters = {
      ...inner,
      add: async (...a: Parameters<typeof inner.add>) => {
        counted.push(a[1].published ?? 0);
        await inner.add(...a);
      },
    };
    const { deps: d } = deps(kafka, createPendingMarks(backend), source(rows), counters, 3_600_000);
    const { s, handle } = store(base);
    const saved = s.checkpoints;
    await processSlice(handle(), d, { targetRows: 1_000_000 });
    expect(kafka.log).toHaveLength(100);
    // Five commits, one booking (the last: done); before it, only the booking at the open.
    expect(counted).toEqual([100]);
    expect(inner.total).toEqual({ fetched: 100, published: 100, deduplicated: 0, deadLettered: 0 });
    expect(s.checkpoints - saved).toBe(2);
    expect(s.data.eos?.counted).toEqual(inner.total);
  });

  it('a crash mid-slice, then a new owner: every record once, counters exact', async () => {
    const rows = world(100);
    const kafka = fakeKafka();
    const backend = createMemoryPendingMarks();
    const marks = createPendingMarks(backend);
    const counters = counterSink();
    const { s, handle } = store(base);
    const crash = (at: number) => (page: number) => {
      if (page === at) throw Object.assign(new Error('boom'), { name: 'NetworkError' });
    };
    // Owner 1 dies before page 7 (pages 6 read but not committed: the transaction holds 6), owner 2 before its
    // 4th page, owner 3 finishes.
    await expect(
      processSlice(handle(), deps(kafka, marks, source(rows, crash(7)), counters).deps, NO_SPLIT),
    ).rejects.toThrow('boom');
    expect(kafka.log).toHaveLength(42); // two transactions of 3 pages
    await expect(
      processSlice(handle(), deps(kafka, marks, source(rows, crash(4)), counters).deps, NO_SPLIT),
    ).rejects.toThrow('boom');
    await processSlice(handle(), deps(kafka, marks, source(rows), counters).deps, NO_SPLIT);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(counters.total).toEqual({ fetched: 100, published: 100, deduplicated: 0, deadLettered: 0 });
    expect(s.data.eos?.counted).toEqual(counters.total);
    expect(backend.locks.size).toBe(0);
  });

  it('the old protocol’s loss path: locks left without an intent, then the next owner’s pages shift (new rows at the head)', async () => {
    // A tail slice ends at the moving head: its next owner starts from the head again and its pages hold other rows
    // than the dead owner's at the same seq. The first owner is killed right after it locked page 0 (rows 0-6). Its
    // successor's page 0 holds 3 new rows and rows 0-3, and commits; its page 1 meets rows 4-6 still locked for the
    // dead page 0. On the old protocol (the intent written after the locks, committed iff the checkpoint's seq >= the
    // page's) that dead page counted as committed: rows 4-6 were marked seen and never published. Now the intent is
    // written with the first lock, and a page is committed only by its own session.
    const rows = world(30);
    const fresh = world(33)
      .slice(0, 3)
      .map((r, i) => ({ ...r, _id: `n${i}` }));
    const byId = (list: DedupRecord[]): SliceSource => ({
      operation: () => 'donation.getManyPaginated',
      async *readPages(_slice, o) {
        let i = o.cursor === undefined ? 0 : list.findIndex((r) => r._id === o.cursor) + 1;
        while (i < list.length) {
          const items = list.slice(i, i + 7);
          i += items.length;
          yield { items, cursor: i >= list.length ? null : String(items.at(-1)!._id) };
        }
      },
    });
    let clock = 1_000_000;
    const backend = createMemoryPendingMarks({ now: () => clock });
    // The first owner is killed right after its first claim step: the step's writes stand, nothing after it runs.
    const claim = backend.claim.bind(backend);
    const settle = backend.settle.bind(backend);
    let dead = false;
    backend.claim = async (request) => {
      const states = await claim(request);
      if (dead) return states;
      dead = true;
      throw new Error('killed');
    };
    backend.settle = (request) =>
      dead && clock < 2_000_000 ? Promise.reject(new Error('killed')) : settle(request);
    const marks = createPendingMarks(backend, { leaseMs: 1_000, pollMs: 1 });
    const kafka = fakeKafka();
    const { s, handle } = store(base);
    await expect(processSlice(handle(), deps(kafka, marks, byId(rows)).deps, NO_SPLIT)).rejects.toThrow(
      /killed/,
    );
    expect(backend.locks.size).toBe(7); // the dead owner's page 0 is locked
    clock = 2_000_000; // past the dead page's lease
    const next = deps(kafka, marks, byId([...fresh, ...rows])).deps;
    next.eos.pagesPerTransaction = 1; // page 0 commits before page 1 is claimed
    const r = await processSlice(handle(), next, NO_SPLIT);
    expect(kafka.log.sort()).toEqual([...fresh, ...rows].map((x) => String(x._id)).sort());
    expect(r).toMatchObject({ published: 33, deduplicated: 0 });
    expect(s.data.eos).toBeDefined();
    expect(backend.locks.size).toBe(0);
  });

  it('a crash between counting a commit and saving the job data: the next owner does not count it again', async () => {
    const rows = world(30); // 5 pages: transactions of 3 + 2
    const kafka = fakeKafka();
    const marks = createPendingMarks(createMemoryPendingMarks());
    const counters = throughCounterSink();
    const { s, handle } = store(base);
    // Owner 1 counts its first commit (21 records), then dies before the job data says so (its 2nd checkpoint:
    // the 1st is the open's).
    let saves = 0;
    const dying = {
      ...handle(),
      async checkpoint(d: SliceJobData) {
        saves += 1;
        if (saves === 2) throw Object.assign(new Error('killed'), { name: 'NetworkError' });
        s.data = d;
      },
    };
    await expect(
      processSlice(dying, deps(kafka, marks, source(rows), counters).deps, NO_SPLIT),
    ).rejects.toThrow('killed');
    expect(counters.total.published).toBe(21);
    expect(s.data.eos?.counted).toEqual({ fetched: 0, published: 0, deduplicated: 0, deadLettered: 0 });
    await processSlice(handle(), deps(kafka, marks, source(rows), counters).deps, NO_SPLIT);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(counters.total).toEqual({ fetched: 30, published: 30, deduplicated: 0, deadLettered: 0 });
  });

  it('a crash between the commit and the seen marks: the next owner settles the intent as committed', async () => {
    const rows = world(30);
    const kafka = fakeKafka();
    const backend = createMemoryPendingMarks();
    const marks = createPendingMarks(backend);
    let failSettle = true;
    const crashing: PendingMarks = {
      ...marks,
      async settle(sliceKey, pages, committed) {
        if (committed && failSettle) {
          failSettle = false;
          throw new Error('died after the commit');
        }
        return marks.settle(sliceKey, pages, committed);
      },
    };
    const counters = counterSink();
    const { handle } = store(base);
    await expect(
      processSlice(handle(), deps(kafka, crashing, source(rows), counters).deps, NO_SPLIT),
    ).rejects.toThrow('died after the commit');
    expect(kafka.log).toHaveLength(21); // the first transaction committed
    expect(backend.locks.size).toBeGreaterThan(0); // its locks are still there: fate unknown to Redis
    // A second slice reading the same rows waits for... nothing: the owner's retry settles the intent first.
    await processSlice(handle(), deps(kafka, marks, source(rows), counters).deps, NO_SPLIT);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(counters.total.published).toBe(30);
    expect(backend.locks.size).toBe(0);
    // Another slice over the same rows now finds them all seen.
    const other = store({ ...base, sliceId: 'r1.s2' });
    const r = await processSlice(other.handle(), deps(kafka, marks, source(rows), counters).deps, NO_SPLIT);
    expect(r).toMatchObject({ published: 0, deduplicated: 30 });
    expect(kafka.log).toHaveLength(30);
  });

  it('a fenced owner stops with SliceFencedError: no settle, no counters, no checkpoint after the fence', async () => {
    const rows = world(50);
    let fenceAt: number | undefined = 5;
    const kafka = fakeKafka({
      beforeCommit: (seq) => {
        if (seq === fenceAt) {
          fenceAt = undefined;
          kafka.fence('r1.s1'); // another owner took the slice
        }
      },
    });
    const backend = createMemoryPendingMarks();
    const marks = createPendingMarks(backend);
    const settles: boolean[] = [];
    const recording: PendingMarks = {
      ...marks,
      async settle(sliceKey, pages, committed) {
        settles.push(committed);
        return marks.settle(sliceKey, pages, committed);
      },
    };
    const counters = counterSink();
    const { s, handle } = store(base);
    await expect(
      processSlice(handle(), deps(kafka, recording, source(rows), counters).deps, NO_SPLIT),
    ).rejects.toBeInstanceOf(SliceFencedError);
    expect(kafka.log).toHaveLength(21); // pages 0-2 committed; 3-5 were fenced at their commit
    expect(settles).toEqual([true]);
    expect(counters.total.published).toBe(21);
    const checkpoints = s.checkpoints;
    // The next owner finishes: pages 3-5 are claimed again under the same page keys, published once.
    await processSlice(handle(), deps(kafka, marks, source(rows), counters).deps, NO_SPLIT);
    expect(s.checkpoints).toBeGreaterThan(checkpoints);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(counters.total.published).toBe(50);
    expect(backend.locks.size).toBe(0);
  });

  it('a new slice asks for its first page while it fences; the early read is dropped when recovery moved the slice', async () => {
    const rows = world(30);
    const kafka = fakeKafka();
    const marks = createPendingMarks(createMemoryPendingMarks());
    const asked: (string | undefined)[] = [];
    const recording = (src: SliceSource): SliceSource => ({
      ...src,
      readPages(slice, o) {
        asked.push(o.cursor);
        return src.readPages(slice, o);
      },
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow: ExactlyOnceDelivery['publisher'] = {
      ...kafka.publisher,
      async openSlice(sliceKey, o) {
        await gate;
        return kafka.publisher.openSlice(sliceKey, o);
      },
    };
    const counters = counterSink();
    const d = deps(kafka, marks, recording(source(rows)), counters).deps;
    const { s, handle } = store(base);
    const done = processSlice(handle(), { ...d, eos: { ...d.eos, publisher: slow } }, NO_SPLIT);
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual([undefined]); // the first page is on its way before the fence answered
    expect(kafka.log).toHaveLength(0); // nothing published before the fence
    open();
    await done;
    expect(asked).toEqual([undefined]); // that read was used, not repeated
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());

    // A zombie's copy of the job data (no `eos` yet) while Kafka holds a checkpoint: the early read from the top is
    // dropped and the slice resumes where the checkpoint says.
    const second = world(60);
    const kafka2 = fakeKafka();
    const marks2 = createPendingMarks(createMemoryPendingMarks());
    const crash = (page: number) => {
      if (page === 4) throw Object.assign(new Error('boom'), { name: 'NetworkError' });
    };
    const stored = store({ ...base, sliceId: 'r1.s3' });
    await expect(
      processSlice(stored.handle(), deps(kafka2, marks2, source(second, crash)).deps, NO_SPLIT),
    ).rejects.toThrow('boom');
    expect(kafka2.log).toHaveLength(21);
    asked.length = 0;
    const stale = { ...stored.handle(), data: { ...base, sliceId: 'r1.s3' } };
    await processSlice(stale, deps(kafka2, marks2, recording(source(second))).deps, NO_SPLIT);
    expect(asked).toEqual([undefined, '21']);
    expect(kafka2.log.sort()).toEqual(second.map((x) => String(x._id)).sort());
    expect(s.data.eos).toBeDefined();
  });

  it('asks for the next page while it claims and commits the current one, and commits while that page is on its way', async () => {
    const rows = world(30); // 5 pages of 7
    const events: string[] = [];
    // Pages after the first come 20 ms after they are asked for (an upstream round trip).
    const slow: SliceSource = {
      operation: () => 'donation.getManyPaginated',
      async *readPages(_slice, o) {
        let i = o.cursor === undefined ? 0 : Number(o.cursor);
        while (i < rows.length) {
          const n = i / 7;
          events.push(`ask ${n}`);
          if (n > 0) await new Promise((resolve) => setTimeout(resolve, 20));
          const items = rows.slice(i, i + 7);
          i += items.length;
          events.push(`page ${n}`);
          yield { items, cursor: i >= rows.length ? null : String(i) };
        }
      },
    };
    const kafka = fakeKafka({ beforeCommit: (seq) => events.push(`commit ${seq}`) });
    const backend = createMemoryPendingMarks();
    const { deps: d } = deps(kafka, createPendingMarks(backend), slow);
    const { handle } = store(base);
    // K = 3 pages and a minute per transaction: without the next page pending, page 0 would wait for pages 1-2.
    const r = await processSlice(handle(), d, NO_SPLIT);
    expect(r).toMatchObject({ published: 30, pages: 5 });
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    // Page 1 is asked for before page 0 commits, and page 0 commits before page 1 comes: its locks are not held
    // across the read.
    expect(events.slice(0, 5)).toEqual(['ask 0', 'page 0', 'ask 1', 'commit 0', 'page 1']);
    // One read per page: nothing read ahead past the last one.
    expect(events.filter((e) => e.startsWith('ask'))).toEqual(['ask 0', 'ask 1', 'ask 2', 'ask 3', 'ask 4']);
    expect(backend.locks.size).toBe(0);
  });

  it('reads no page ahead of a page that splits the slice; a user walk splits at growing depths', async () => {
    // Rows 10 ms apart: after two pages the rest of [0, 10 000 000) is estimated far above the split threshold.
    const run = async (filters: Record<string, string>) => {
      const rows = world(100);
      let produced = 0;
      const counting = watched(rows, () => (produced += 1));
      const children: SliceJobData[][] = [];
      const kafka = fakeKafka();
      const { deps: d } = deps(kafka, createPendingMarks(createMemoryPendingMarks()), counting);
      const { handle } = store({ ...base, filters });
      const h = { ...handle(), spawn: async (c: SliceJobData[]) => void children.push(c) };
      const r = await processSlice(h, d, { targetRows: 10, maxSplitParts: 8 });
      return { r, produced, first: children[0] ?? [] };
    };
    const feed = await run({});
    expect(feed.first.length).toBeGreaterThan(2);
    expect(feed.produced).toBe(feed.r.pages); // no read was dropped
    // The feed's first split: equal pieces.
    const widths = feed.first.map((c) => c.end - c.start);
    expect(Math.max(...widths) - Math.min(...widths)).toBeLessThanOrEqual(1);

    const walk = await run({ userId: 'u1' });
    expect(walk.produced).toBe(walk.r.pages);
    // The walk's first split: pieces nearest the reader narrow, each deeper one wider (quadrupling depths).
    const pieces = [...walk.first].sort((a, b) => b.end - a.end).slice(0, -1); // the deepest reaches the start
    expect(pieces.length).toBeGreaterThan(2);
    const depths = pieces.map((c) => c.end - c.start);
    depths.slice(1).forEach((w, i) => expect(w).toBeGreaterThan(2 * (depths[i] ?? Infinity)));
  });

  it('a split adds its children and asks for its own next page while the page that split it is claimed and committed', async () => {
    const rows = world(100);
    const events: string[] = [];
    const asking: SliceSource = {
      ...source(rows),
      async *readPages(slice, o) {
        const pages = source(rows).readPages(slice, o)[Symbol.asyncIterator]();
        for (;;) {
          events.push(`ask from ${slice.start}`);
          const next = await pages.next();
          if (next.done === true) return;
          yield next.value;
        }
      },
    };
    const kafka = fakeKafka({ beforeCommit: (seq) => events.push(`commit ${seq}`) });
    const { deps: d } = deps(kafka, createPendingMarks(createMemoryPendingMarks()), asking);
    const { s, handle } = store({ ...base, filters: { userId: 'u1' } });
    const h = { ...handle(), spawn: async () => void events.push('spawn') };
    const r = await processSlice(h, d, { targetRows: 10, maxSplitParts: 8 });
    expect(r.splits).toBeGreaterThan(0);
    expect(s.data.start).toBeGreaterThan(base.start);
    // From the first split on: the children and the slice's next page (from its narrowed start) come before the
    // commit of the page that split it. Before, both waited for that commit.
    const afterSplit = events.slice(events.indexOf('spawn'));
    const commitAt = afterSplit.findIndex((e) => e.startsWith('commit'));
    expect(afterSplit.slice(0, commitAt)).toContain(`ask from ${s.data.start}`);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
  });

  it('a crash while the page that split the slice commits: the early read is dropped, the next owner reads on, every record once', async () => {
    const rows = world(100);
    let crashed = false;
    let spawned = 0;
    const kafka = fakeKafka({
      beforeCommit: () => {
        if (spawned > 0 && !crashed) {
          crashed = true;
          throw new Error('crash while committing');
        }
      },
    });
    const backend = createMemoryPendingMarks();
    const { handle } = store({ ...base, filters: { userId: 'u1' } });
    const h = () => ({ ...handle(), spawn: async () => void (spawned += 1) });
    const opts = { targetRows: 10, maxSplitParts: 8 };
    const first = deps(kafka, createPendingMarks(backend), source(rows));
    await expect(processSlice(h(), first.deps, opts)).rejects.toThrow('crash while committing');
    const next = deps(kafka, createPendingMarks(backend), source(rows));
    await processSlice(h(), next.deps, opts);
    expect(crashed).toBe(true);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(backend.locks.size).toBe(0);
  });

  it('reads READ_AHEAD_PAGES pages ahead of a commit that is slow, and no further; every record once', async () => {
    const rows = world(50); // 8 pages of 7
    const events: string[] = [];
    const counting = watched(rows, (page) =>
      events.push(`page ${rows.indexOf(page.items[0] as DedupRecord) / 7}`),
    );
    // The first commit (pages 0-2, K = 3) waits until the test lets it go.
    const { kafka, release } = heldFirstCommit(events);
    const { deps: d } = deps(kafka, createPendingMarks(createMemoryPendingMarks()), counting);
    const { handle } = store(base);
    const done = processSlice(handle(), d, NO_SPLIT);
    const read = 3 + READ_AHEAD_PAGES; // the three pages committing, and the ones ahead
    await until(() => events.includes(`page ${read - 1}`));
    await new Promise((r) => setTimeout(r, 10));
    // While pages 0-2 commit, the pages ahead are read; the next one waits for room.
    expect(events).toContain('commit 2');
    expect(events.filter((e) => e.startsWith('page'))).toEqual(
      Array.from({ length: read }, (_, i) => `page ${i}`),
    );
    release();
    const r = await done;
    expect(r).toMatchObject({ published: 50, pages: 8 });
    expect(events.filter((e) => e.startsWith('page'))).toHaveLength(8); // one read per page
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
  });

  it('a split decided on a page read ahead adds its children while the pages before it commit', async () => {
    const rows = world(100);
    const events: string[] = [];
    // Pages after the first come 20 ms after they are asked for: the first page commits while the second is on its way.
    const slow = watched(rows, (page) =>
      page.items[0] === rows[0] ? undefined : new Promise((resolve) => setTimeout(resolve, 20)),
    );
    const { kafka, release } = heldFirstCommit(events);
    const { deps: d } = deps(kafka, createPendingMarks(createMemoryPendingMarks()), slow);
    const { s, handle } = store({ ...base, filters: { userId: 'u1' } });
    const h = { ...handle(), spawn: async () => void events.push('spawn') };
    const done = processSlice(h, d, { targetRows: 10, maxSplitParts: 8 });
    await until(() => events.includes('spawn'));
    // The walk splits on its second page, which came while the first was committing (held): the children are added
    // then. Before, the split waited for that commit.
    expect(events).toEqual(['commit 0', 'spawn']);
    release();
    const r = await done;
    expect(r.splits).toBeGreaterThan(0);
    expect(s.data.start).toBeGreaterThan(base.start); // the narrowed start is checkpointed
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
  });

  it('a crash while a page waits read ahead: it is not published, the next owner reads on, every record once', async () => {
    const rows = world(50);
    let crashed = false;
    const kafka = fakeKafka({
      beforeCommit: (seq) => {
        if (seq === 5 && !crashed) {
          crashed = true;
          throw new Error('crash while committing');
        }
      },
    });
    const backend = createMemoryPendingMarks();
    const { handle } = store(base);
    const first = deps(kafka, createPendingMarks(backend), source(rows));
    await expect(processSlice(handle(), first.deps, NO_SPLIT)).rejects.toThrow('crash while committing');
    // Pages 0-2 committed; pages 3-5 did not, and the page read ahead of them was never added: none is in the log.
    expect(kafka.log.sort()).toEqual(
      rows
        .slice(0, 21)
        .map((x) => String(x._id))
        .sort(),
    );
    const next = deps(kafka, createPendingMarks(backend), source(rows));
    await processSlice(handle(), next.deps, NO_SPLIT);
    expect(kafka.log.sort()).toEqual(rows.map((x) => String(x._id)).sort());
    expect(backend.locks.size).toBe(0);
  });

  it('the slice reader with `ahead` 3: three pages wait untaken, a fourth is not asked for until one is taken', async () => {
    const rows = world(50);
    let asked = 0;
    const counting = watched(rows, () => (asked += 1));
    const reader = unsplitReader(counting, 3);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(asked).toBe(3);
    expect(reader.waiting).toBe(false);
    expect((await reader.next()).value?.page.items[0]).toBe(rows[0]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(asked).toBe(4);
    let pages = 1;
    while ((await reader.next()).done !== true) pages += 1;
    expect(pages).toBe(8); // every page once, in order, then done
    reader.close();
  });

  it('the slice reader: close() drops a read in flight and its error, and next() rejects from then on', async () => {
    let asked = 0;
    const pages: SliceSource = {
      ...source([]),
      async *readPages() {
        asked += 1;
        yield { items: world(3), cursor: 'c1' };
        asked += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('dropped');
      },
    };
    const reader = unsplitReader(pages);
    expect((await reader.next()).value?.page.cursor).toBe('c1');
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(reader.waiting).toBe(true); // the second read is on its way
    reader.close();
    await new Promise((resolve) => setTimeout(resolve, 20)); // an unhandled rejection would fail the run
    expect(asked).toBe(2);
    // Never "done": the slice would be recorded as read to its end.
    await expect(reader.next()).rejects.toThrow('closed');
  });
});
