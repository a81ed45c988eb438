/* eslint-disable @typescript-eslint/require-await -- recording fakes implement async interfaces */
import { describe, expect, it } from 'vitest';
import { SliceInterruptedError } from '../../../../src/foundation/errors/index.js';
import type { PagePublisher } from '../../../../src/pipeline/publish/index.js';
import {
  createDedupStore,
  createMemorySeenSet,
  type DedupRecord,
} from '../../../../src/pipeline/dedup/index.js';
import { processSlice, type SliceSource } from '../../../../src/pipeline/slice/index.js';
import type { SliceJobData } from '../../../../src/pipeline/planner/index.js';

/** A world of donations at known times; pages newest first by (createdAt, _id), cursor = "time|id". */
function world(n: number, spacing = 10): DedupRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: `d${String(i).padStart(6, '0')}`,
    createdAt: new Date(1_000_000 + Math.floor(i / 2) * spacing).toISOString(), // ties: two rows per ms
  })).sort((a, b) => {
    const ta = Date.parse(String(a.createdAt));
    const tb = Date.parse(String(b.createdAt));
    return tb - ta || (String(b._id) < String(a._id) ? -1 : 1);
  });
}

function fakeSource(rows: DedupRecord[], failAfterPages = Infinity): SliceSource & { reads: number } {
  const src = {
    reads: 0,
    operation: () => 'donation.getManyPaginated',
    async *readPages(slice: { start: number; end: number }, o: { cursor?: string }) {
      let bound: [number, string] = [slice.end, ''];
      if (o.cursor !== undefined) {
        const [t, id] = o.cursor.split('|');
        bound = [Number(t), id ?? ''];
      }
      for (;;) {
        const below = rows.filter((r) => {
          const t = Date.parse(String(r.createdAt));
          return t < bound[0] || (t === bound[0] && String(r._id) < bound[1]);
        });
        const page = below.slice(0, 7).filter((r) => Date.parse(String(r.createdAt)) >= slice.start);
        if (page.length === 0) return;
        src.reads += 1;
        if (src.reads > failAfterPages) throw Object.assign(new Error('boom'), { name: 'NetworkError' });
        const last = page[page.length - 1]!;
        bound = [Date.parse(String(last.createdAt)), String(last._id)];
        yield { items: page, cursor: `${bound[0]}|${bound[1]}` };
        if (page.length < 7) return;
      }
    },
  };
  return src;
}

function recordingPublisher(): PagePublisher & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    async publishPage({ records }) {
      for (const r of records) sent.push(String((r as DedupRecord)._id));
      return { published: records.length, deadLettered: 0, deadLetters: [] };
    },
  };
}

const counters = { add: async () => undefined };

function job(data: SliceJobData) {
  const h = {
    data,
    checkpoints: [] as SliceJobData[],
    children: [] as SliceJobData[],
    async checkpoint(d: SliceJobData) {
      h.checkpoints.push(d);
      h.data = d;
    },
    async spawn(c: SliceJobData[]) {
      h.children.push(...c);
    },
  };
  return h;
}

const base: SliceJobData = {
  runId: 'r1',
  sliceId: 's1',
  resource: 'donations',
  filters: {},
  start: 0,
  end: 10_000_000,
  replay: false,
  depth: 0,
};

describe('processSlice', () => {
  it('publishes every row of the slice once and checkpoints after each page', async () => {
    const rows = world(100);
    const pub = recordingPublisher();
    const j = job(base);
    const r = await processSlice(
      j,
      { source: fakeSource(rows), dedup: createDedupStore(createMemorySeenSet()), publisher: pub, counters },
      { targetRows: 1_000_000 },
    );
    expect(new Set(pub.sent).size).toBe(100);
    expect(pub.sent).toHaveLength(100);
    expect(r.published).toBe(100);
    expect(j.checkpoints.length).toBe(r.pages);
    expect(j.checkpoints.at(-1)?.cursor).toMatch(/\|/);
  });

  it('a failure resumes from the checkpoint: nothing lost, nothing republished', async () => {
    const rows = world(100);
    const pub = recordingPublisher();
    const dedup = createDedupStore(createMemorySeenSet());
    const j = job(base);
    await expect(
      processSlice(
        j,
        { source: fakeSource(rows, 5), dedup, publisher: pub, counters },
        { targetRows: 1_000_000 },
      ),
    ).rejects.toThrow('boom');
    expect(pub.sent).toHaveLength(35);
    const j2 = job(j.data);
    await processSlice(
      j2,
      { source: fakeSource(rows), dedup, publisher: pub, counters },
      { targetRows: 1_000_000 },
    );
    expect(pub.sent).toHaveLength(100);
    expect(new Set(pub.sent).size).toBe(100);
  });

  it('a dense slice spawns children for its older part; slice + children read every row exactly once', async () => {
    const rows = world(400);
    const pub = recordingPublisher();
    const dedup = createDedupStore(createMemorySeenSet());
    const j = job(base);
    const r = await processSlice(
      j,
      { source: fakeSource(rows), dedup, publisher: pub, counters },
      { targetRows: 30, minPagesBeforeSplit: 2 },
    );
    expect(r.splits).toBeGreaterThan(0);
    expect(j.children.length).toBeGreaterThan(0);
    // Run the children (and theirs) to completion with a separate dedup store: overlap would show as repeats.
    const queue = [...j.children];
    const perChild: string[] = [];
    const cpub: PagePublisher = {
      async publishPage({ records: recs }) {
        perChild.push(...recs.map((x) => String((x as DedupRecord)._id)));
        return { published: recs.length, deadLettered: 0, deadLetters: [] };
      },
    };
    while (queue.length > 0) {
      const c = job(queue.shift()!);
      await processSlice(
        c,
        {
          source: fakeSource(rows),
          dedup: createDedupStore(createMemorySeenSet()),
          publisher: cpub,
          counters,
        },
        { targetRows: 30 },
      );
      queue.push(...c.children);
    }
    const all = [...pub.sent, ...perChild];
    expect(all).toHaveLength(400);
    expect(new Set(all).size).toBe(400);
    for (const c of j.children) expect(c.sliceId).not.toContain(':');
  });

  it('a feed slice splits into equal pieces, a user walk at growing depths (same rule as exactly-once)', async () => {
    const firstSplit = async (filters: Record<string, string>): Promise<SliceJobData[]> => {
      const j = job({ ...base, filters });
      const spawns: SliceJobData[][] = [];
      await processSlice(
        { ...j, spawn: async (c: SliceJobData[]) => void spawns.push(c) },
        {
          source: fakeSource(world(400)),
          dedup: createDedupStore(createMemorySeenSet()),
          publisher: recordingPublisher(),
          counters,
        },
        { targetRows: 30, minPagesBeforeSplit: 2, maxSplitParts: 8 },
      );
      return spawns[0] ?? [];
    };
    const feed = await firstSplit({});
    expect(feed.length).toBeGreaterThan(2);
    const widths = feed.map((c) => c.end - c.start);
    expect(Math.max(...widths) - Math.min(...widths)).toBeLessThanOrEqual(1);

    const walk = await firstSplit({ userId: 'u1' });
    // Nearest the reader narrow, each deeper piece wider (quadrupling depths); the deepest reaches the start.
    const pieces = [...walk].sort((a, b) => b.end - a.end).slice(0, -1);
    expect(pieces.length).toBeGreaterThan(2);
    const depths = pieces.map((c) => c.end - c.start);
    depths.slice(1).forEach((w, i) => expect(w).toBeGreaterThan(2 * (depths[i] ?? Infinity)));
  });

  it('already-seen rows are not published again; replay publishes them once more', async () => {
    const rows = world(30);
    const dedup = createDedupStore(createMemorySeenSet());
    const p1 = recordingPublisher();
    await processSlice(job(base), { source: fakeSource(rows), dedup, publisher: p1, counters });
    const p2 = recordingPublisher();
    const r2 = await processSlice(job({ ...base, runId: 'r2' }), {
      source: fakeSource(rows),
      dedup,
      publisher: p2,
      counters,
    });
    expect(p2.sent).toHaveLength(0);
    expect(r2.deduplicated).toBe(30);
    const p3 = recordingPublisher();
    await processSlice(job({ ...base, runId: 'r3', replay: true }), {
      source: fakeSource(rows),
      dedup,
      publisher: p3,
      counters,
    });
    expect(p3.sent).toHaveLength(30);
  });

  it('shutdown stops after the page in hand, with its checkpoint saved', async () => {
    const rows = world(100);
    const ac = new AbortController();
    const pub: PagePublisher = {
      async publishPage({ records: recs }) {
        ac.abort();
        return { published: recs.length, deadLettered: 0, deadLetters: [] };
      },
    };
    const j = job(base);
    await expect(
      processSlice(
        j,
        {
          source: fakeSource(rows),
          dedup: createDedupStore(createMemorySeenSet()),
          publisher: pub,
          counters,
        },
        { signal: ac.signal },
      ),
    ).rejects.toBeInstanceOf(SliceInterruptedError);
    expect(j.checkpoints).toHaveLength(1);
  });
});
