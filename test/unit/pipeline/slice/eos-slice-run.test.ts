/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
// The exactly-once slice's run (createEosRun) on recording fakes: what each operation commits, settles and books.
import { describe, expect, it } from 'vitest';
import type { PendingPage } from '../../../../src/pipeline/dedup/index.js';
import type { SliceCheckpoint, SliceSession, TransactionalPage } from '../../../../src/output/kafka/index.js';
import type { RunCounterValues, SliceJobData } from '../../../../src/pipeline/contract/job-types.js';
import {
  createEosRun,
  ZERO,
  type OpenPage,
  type SliceCheckpointState,
} from '../../../../src/pipeline/slice/eos-slice-run.js';
import type {
  ExactlyOnceDelivery,
  ProcessSliceDeps,
  SliceJobHandle,
} from '../../../../src/pipeline/slice/slice-contract.js';

const DATA: SliceJobData = {
  runId: 'r1',
  sliceId: 's1',
  resource: 'donations',
  filters: {},
  start: 0,
  end: 1_000,
  replay: false,
  depth: 0,
};

/** A run on fakes that record what reaches Kafka, the marks, the counters and the job; the clock is `clock.now`. */
function fakeRun(bookMs = 1_000) {
  const clock = { now: 0 };
  const commits: SliceCheckpointState[] = [];
  const sent: TransactionalPage[] = [];
  const settled: { pages: string[]; committed: boolean }[] = [];
  const counted: RunCounterValues[] = [];
  const saved: SliceJobData[] = [];
  const session = {
    recovered: null,
    nextSeq: 0,
    owner: 'w1',
    token: 't1',
    pendingPages: 0,
    addPage: (page: TransactionalPage) => sent.push(page),
    async commit(state: SliceCheckpointState): Promise<SliceCheckpoint<SliceCheckpointState>> {
      commits.push(state);
      return {
        seq: commits.length,
        state,
        offset: String(100 + commits.length),
      } as SliceCheckpoint<SliceCheckpointState>;
    },
    async close() {},
  } as unknown as SliceSession<SliceCheckpointState>;
  const eos = {
    marks: {
      async settle(_slice: string, pages: PendingPage[], committed: boolean) {
        settled.push({ pages: pages.map((p) => p.pageKey), committed });
      },
    },
  } as unknown as ExactlyOnceDelivery;
  const deps = {
    counters: {
      async add() {},
      async addThrough(_run: string, _slice: string, cumulative: RunCounterValues) {
        counted.push(cumulative);
        return cumulative;
      },
    },
  } as unknown as ProcessSliceDeps;
  const job: SliceJobHandle = {
    data: DATA,
    async checkpoint(data) {
      saved.push(data);
    },
    async spawn() {},
  };
  const run = createEosRun({
    job,
    deps,
    eos,
    o: {
      pageSize: 100,
      targetRows: 5_000,
      splitFactor: 2,
      maxSplitParts: 8,
      maxDepth: 6,
      minPagesBeforeSplit: 2,
      now: () => clock.now,
    },
    session,
    sliceKey: DATA.sliceId,
    bookMs,
    data: DATA,
    state: { cursor: null, start: 0, done: false, counts: ZERO, pages: 0, splits: 0 },
    counted: ZERO,
  });
  return { run, clock, commits, sent, settled, counted, saved };
}

/** A page of `n` fresh records (its claim holds `n` ids; none when `n` is 0), moving the cursor to `cursor`. */
function page(key: string, n: number, cursor: string | null): OpenPage {
  return {
    sent: { topic: 't', records: [], dlqTopic: 'd', deadLetters: [] },
    claimed: {
      pageKey: key,
      entries: Array.from({ length: n }, (_, i) => `${key}-${i}`),
    } as unknown as PendingPage,
    counts: { fetched: n + 1, published: n, deduplicated: 1, deadLettered: 0 },
    cursor,
  };
}

describe('createEosRun', () => {
  it('commits the open pages with cumulative counts, settles only pages that claimed ids, and moves the cursor', async () => {
    const { run, commits, sent, settled } = fakeRun();
    run.join(page('p0', 3, 'c1'));
    run.join(page('p1', 0, 'c2'));
    expect(sent).toHaveLength(2);
    expect(run.checkpointNow()).toEqual({ cursor: 'c2', start: 0, done: false });
    await run.commitOpen();
    expect(commits).toEqual([
      {
        cursor: 'c2',
        start: 0,
        done: false,
        counts: { fetched: 5, published: 3, deduplicated: 2, deadLettered: 0 },
        pages: 2,
        splits: 0,
      },
    ]);
    expect(settled).toEqual([{ pages: ['p0'], committed: true }]);
    run.join(page('p2', 2, null));
    await run.commit(run.checkpointNow(true));
    expect(commits[1]).toMatchObject({
      cursor: 'c2',
      done: true,
      pages: 3,
      counts: { fetched: 8, published: 5 },
    });
    expect(run.result()).toEqual({
      fetched: 8,
      published: 5,
      deduplicated: 3,
      deadLettered: 0,
      pages: 3,
      splits: 0,
    });
  });

  it('commits nothing when no page is open', async () => {
    const { run, commits } = fakeRun();
    await run.commitOpen(true);
    expect(commits).toEqual([]);
  });

  it('books the counters and the job data at most every bookMs, and always when forced or done', async () => {
    const { run, clock, counted, saved } = fakeRun(1_000);
    run.startReading();
    run.join(page('p0', 1, 'c1'));
    clock.now = 500;
    await run.commitOpen();
    expect(counted).toEqual([]);
    expect(saved).toEqual([]);
    run.join(page('p1', 1, 'c2'));
    clock.now = 1_000;
    await run.commitOpen();
    expect(counted).toEqual([{ fetched: 4, published: 2, deduplicated: 2, deadLettered: 0 }]);
    expect(saved.at(-1)).toMatchObject({ cursor: 'c2', eos: { readFrom: '102', counted: counted[0] } });
    run.join(page('p2', 1, 'c3'));
    clock.now = 1_100;
    await run.commitOpen(true);
    expect(saved).toHaveLength(2);
    run.join(page('p3', 1, null));
    clock.now = 1_200;
    await run.commit(run.checkpointNow(true));
    expect(saved).toHaveLength(3);
    expect(run.data.eos?.counted).toEqual(run.state.counts);
  });

  it('is due after `pages` pages or `ms` since the first open page', () => {
    const { run, clock } = fakeRun();
    clock.now = 10;
    run.join(page('p0', 1, 'c1'));
    expect(run.openDue(2, 100)).toBe(false);
    clock.now = 110;
    expect(run.openDue(2, 100)).toBe(true);
    clock.now = 10;
    run.join(page('p1', 1, 'c2'));
    expect(run.openDue(2, 100)).toBe(true);
  });

  it('narrows the start with one more split in a forced checkpoint', async () => {
    const { run, commits, saved } = fakeRun();
    run.join(page('p0', 1, 'c1'));
    await run.commitOpen();
    await run.narrow(400);
    expect(commits.at(-1)).toMatchObject({ start: 400, cursor: 'c1', splits: 1, pages: 1 });
    expect(saved.at(-1)).toMatchObject({ start: 400 });
    expect(run.result().splits).toBe(1);
  });

  it('drops the open pages unsettled', async () => {
    const { run, settled, commits } = fakeRun();
    run.join(page('p0', 2, 'c1'));
    run.dropOpen();
    run.join(page('p1', 1, 'c2'));
    await run.commitOpen();
    expect(settled).toEqual([{ pages: ['p1'], committed: true }]);
    expect(commits[0]?.pages).toBe(2);
  });
});
