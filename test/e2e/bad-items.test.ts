/**
 * Issue 48, item 2: an item that is not a record (`null`, or a bare string in its place: the simulator's `badItems`
 * fault) passed the envelope check and failed its slice with a TypeError on `record._id`, 8 attempts in a row. Now
 * it is dead-lettered with the reason and its position in the page, and the slice goes on: the run completes, every
 * good record is in its topic (read back against the simulator's truth), every bad one in the DLQ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqTopicName, topicName } from '../../src/foundation/models/topic-names.js';
import { readTopic } from '../../src/output/kafka/readers/read-topic.js';
import { HEADER } from '../../src/pipeline/publish/index.js';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('items that are not records (issue 48, item 2)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('bad-items', { faults: { seed: 13, badItems: 0.01 } });
    await h.startWorkers(16);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('dead-letters each with its reason and page position; the run completes with nothing missing', async () => {
    const bad = h.sim.malformed('donations');
    expect(bad.length).toBeGreaterThan(3);
    expect(new Set(bad.map((b) => b.kind))).toEqual(new Set(['null-item', 'not-object']));
    const result = await h.backfill({ resources: ['donations'] }, 120_000);
    const report = await h.verify('donations');
    expect({ missing: report.missing, unexpected: report.unexpected }).toEqual({ missing: 0, unexpected: 0 });

    const letters: { value: string; headers: Record<string, string> }[] = [];
    const topic = dlqTopicName(topicName(h.settings.topicPrefix, 'donations'));
    await readTopic({ brokers: h.settings.kafkaBrokers, topic }, (m) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = String(v);
      letters.push({ value: m.value?.toString() ?? '', headers });
    });
    const notRecords = letters.filter((l) => l.headers[HEADER.errorReason] === 'not-a-record');
    expect(notRecords).toHaveLength(bad.length);
    for (const l of notRecords) {
      // Where in the page: the cursor the page was read at and the item's index in it.
      expect(l.headers[HEADER.pageIndex]).toMatch(/^\d+$/);
      expect(l.headers).toHaveProperty(HEADER.pageCursor);
    }
    expect(notRecords.map((l) => l.value).sort()).toEqual(
      bad.map((b) => (b.kind === 'null-item' ? 'null' : JSON.stringify(b._id))).sort(),
    );
    expect(result.counters.deadLettered).toBe(bad.length);
  }, 180_000);
});
