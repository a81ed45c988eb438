/**
 * Issue 48, item 8: `gamedata dlq replay`. Users the simulator serves malformed are dead-lettered by a backfill on the
 * real Kafka, registry and Redis. Then the upstream fixes one of them (`sim.fix`): the replay reads it again by id and
 * republishes it, and the topic then equals the truth record by record with no duplicate; a second replay publishes
 * nothing more. The users still malformed stay in the DLQ with their reason, and the summary line says how many and why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqTopicName, topicName } from '../../src/foundation/models/topic-names.js';
import { readTopic } from '../../src/output/kafka/readers/read-topic.js';
import { HEADER } from '../../src/pipeline/publish/index.js';
import { runDlqReplay } from '../../src/app/index.js';
import { formatDlqReplay } from '../../src/pipeline/dead-letters/index.js';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('dlq replay (issue 48, item 8)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('dlq-replay', { faults: { seed: 21, malformed: 0.03 } });
    await h.startWorkers(16);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  /** The users DLQ's messages by key: their reasons. */
  async function deadLetters(): Promise<Map<string, string[]>> {
    const byKey = new Map<string, string[]>();
    const topic = dlqTopicName(topicName(h.settings.topicPrefix, 'users'));
    await readTopic({ brokers: h.settings.kafkaBrokers, topic }, (m) => {
      const key = m.key?.toString() ?? '';
      byKey.set(key, [...(byKey.get(key) ?? []), m.headers[HEADER.errorReason] ?? '']);
    });
    return byKey;
  }

  it('republishes a record fixed upstream exactly once; a still-bad one stays with its reason', async () => {
    const bad = h.sim.malformed('users');
    const withId = bad.filter((b) => b.kind !== 'missing-id');
    expect(withId.length).toBeGreaterThan(2);
    await h.backfill({ resources: ['users'] }, 180_000);
    const before = await deadLetters();
    for (const b of withId) expect(before.get(b._id)).toEqual([b.kind]);

    const [fixed, stillBad] = withId;
    if (fixed === undefined || stillBad === undefined) throw new Error('two malformed users expected');
    h.sim.fix('users', [fixed._id]);
    // Fixed upstream but not on the topic: its dead letter was marked seen, so nothing but the replay publishes it.
    expect((await h.verify('users')).missing).toBe(1);

    const first = await runDlqReplay(h.settings, { resource: 'users' });
    expect(first).toMatchObject({
      deadLetters: bad.length,
      inRange: bad.length,
      republished: 1,
      refetched: 1,
      alreadyRepublished: 0,
      deadLetteredAgain: 0,
    });
    const leftCount = Object.values(first.left).reduce((a, n) => a + n, 0);
    expect(leftCount).toBe(bad.length - 1);
    const kinds = new Map<string, number>();
    for (const b of bad.slice()) if (b._id !== fixed._id) kinds.set(b.kind, (kinds.get(b.kind) ?? 0) + 1);
    expect(first.left).toEqual(Object.fromEntries(kinds));
    expect(formatDlqReplay(first)).toMatch(
      new RegExp(
        `1 encode now \\(1 read again from the upstream\\): republished 1, 0 already republished; ${String(leftCount)} left in `,
      ),
    );
    const after = await h.verify('users');
    expect({ missing: after.missing, unexpected: after.unexpected, duplicates: after.duplicates }).toEqual({
      missing: 0,
      unexpected: 0,
      duplicates: 0,
    });

    // Again: nothing more is published; the fixed one counts as already republished.
    const second = await runDlqReplay(h.settings, { resource: 'users' });
    expect(second).toMatchObject({ republished: 0, alreadyRepublished: 1, refetched: 1 });
    expect((await h.verify('users')).duplicates).toBe(0);

    // The still-bad one is still in the DLQ, with its reason, and the replay wrote nothing there.
    const dlq = await deadLetters();
    expect(dlq.get(stillBad._id)).toEqual([stillBad.kind]);
    expect([...dlq.values()].flat()).toHaveLength(bad.length);

    // At-least-once workers: the same seen-set scope, so the same answer (one more fixed, the first not again).
    h.sim.fix('users', [stillBad._id]);
    const alo = await runDlqReplay({ ...h.settings, delivery: 'at-least-once' }, { resource: 'users' });
    expect(alo).toMatchObject({ republished: 1, alreadyRepublished: 1, refetched: 2 });
    const last = await h.verify('users');
    expect({ missing: last.missing, duplicates: last.duplicates }).toEqual({ missing: 0, duplicates: 0 });

    // --since after every dead letter: nothing in range, nothing done.
    const none = await runDlqReplay(h.settings, { resource: 'users', since: Date.now() + 60_000 });
    expect(none).toMatchObject({ deadLetters: bad.length, inRange: 0, republished: 0 });
  }, 300_000);
});
