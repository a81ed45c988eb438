/**
 * `verify`: reads a resource's topic from the beginning, decodes every value through the registry, and compares
 * the set of `(_id, version)` with the upstream's truth; reads the DLQ too and reports the malformed records it
 * holds separately.
 * It reads as a read_committed consumer, up to the last stable offset (`readTopic`): what exactly-once delivery
 * promises, so records of aborted transactions (a worker killed or fenced mid-commit) are neither counted nor
 * reported as duplicates.
 */
import type { RecordDecoder } from '../../output/encoding/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { dlqTopicName, topicName } from '../../foundation/models/index.js';
import { compareCounts, versionKey, type CompareReport } from './compare-records.js';
import { readTopic, type ReadTopicStats } from '../../output/kafka/index.js';

export interface VerifyResourceOptions {
  resource: ResourceName;
  brokers: readonly string[];
  topicPrefix: string;
  decoder: RecordDecoder;
  /** The upstream's records (the simulator's truth, or everything re-read through the client). */
  truth: Iterable<Record<string, unknown>>;
  /** `_id`s the upstream serves malformed: expected in the DLQ, not on the topic. */
  malformedIds?: ReadonlySet<string>;
}

export interface VerifyReport extends CompareReport {
  resource: ResourceName;
  topic: string;
  /** Values that could not be decoded (counted as not on the topic). */
  undecodable: number;
  /** The topic reader's own events: group joins again and messages fetched again (skipped: never counted twice). */
  reader: ReadTopicStats;
  dlq: {
    topic: string;
    messages: number;
    /** Malformed records expected in the DLQ. */
    expected: number;
    /** Of those, how many are there. */
    found: number;
  };
  /** True when nothing is missing and every expected dead letter is in the DLQ. */
  ok: boolean;
}

/** Verifies one resource. */
export async function verifyResource(o: VerifyResourceOptions): Promise<VerifyReport> {
  const topic = topicName(o.topicPrefix, o.resource);
  // The truth's keys first and the topic's counted as read: at scale large (10 M records) a list of the topic's keys
  // beside the truth's records drove the process into its heap limit.
  const truthKeys: string[] = [];
  for (const r of o.truth) truthKeys.push(versionKey(o.resource, r));
  const counts = new Map<string, number>();
  let consumed = 0;
  let undecodable = 0;
  const reader: ReadTopicStats = { rejoins: 0, refetched: 0 };
  await readTopic({ brokers: o.brokers, topic, stats: reader }, async (m) => {
    if (m.value === null) return; // tombstone
    try {
      const { record } = await o.decoder.decode(o.resource, m.value);
      const k = versionKey(o.resource, record);
      counts.set(k, (counts.get(k) ?? 0) + 1);
      consumed += 1;
    } catch {
      undecodable += 1;
    }
  });
  const malformed = o.malformedIds ?? new Set<string>();
  const report = compareCounts(counts, consumed, truthKeys, malformed);
  const dlqTopic = dlqTopicName(topic);
  const dlqKeys = new Set<string>();
  let keyless = 0;
  const dlqMessages = await readTopic({ brokers: o.brokers, topic: dlqTopic }, (m) => {
    if (m.key !== null && m.key.length > 0) dlqKeys.add(m.key.toString());
    else keyless += 1;
  });
  let found = 0;
  for (const id of malformed) if (dlqKeys.has(id)) found += 1;
  // A record corrupted by losing its `_id` is dead-lettered without a key: count those against the rest.
  found += Math.min(keyless, malformed.size - found);
  return {
    ...report,
    resource: o.resource,
    topic,
    undecodable,
    reader,
    dlq: { topic: dlqTopic, messages: dlqMessages, expected: malformed.size, found },
    ok: report.missing === 0 && found === malformed.size,
  };
}
