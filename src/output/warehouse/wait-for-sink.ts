/**
 * Waits until a sink connector has consumed its topic to the end: the committed offsets of its consumer group
 * (`connect-<name>`) reach the topic's end offsets on every partition. Fails fast when a task is FAILED.
 * Connect commits sink offsets every `offset.flush.interval.ms` (the stack's worker: 2 s) after the rows are written.
 * Debezium commits only offsets of records it wrote, so records the framework sent to the connector's DLQ at the
 * end of a partition stay "uncommitted": those offsets are read from the DLQ's `__connect.errors.*` headers and
 * count as done. Transaction markers (and records of aborted transactions) take offsets that a read_committed sink
 * never gets, so a gap counts as done when the records a read_committed reader finds in it are all in the DLQ.
 */
import { AbortedError, ServiceError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { topicName } from '../../foundation/models/index.js';
import { readTopic, recordOffsets } from '../kafka/readers/read-topic.js';
import { createTopicOffsets } from '../kafka/admin/topic-offsets.js';
import type { ConnectClient } from './connect-client.js';
import { connectDlqTopicName } from './sink-connector-config.js';
import { sleep } from '../../foundation/retry/index.js';

export interface WaitForSinkOptions {
  connect: ConnectClient;
  brokers: string[];
  connectorName: string;
  topic: string;
  /** @default 300000 */
  timeoutMs?: number;
  /** @default 500 */
  pollMs?: number;
}

export async function waitForSink(options: WaitForSinkOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const pollMs = options.pollMs ?? 500;
  const admin = createTopicOffsets({ brokers: options.brokers, clientId: 'wait-for-sink' });
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  const dlq = connectDlqTopicName(options.topic);
  let dlqEnd = -1;
  const dead = new Set<string>(); // `<partition>:<offset>` of source records in the DLQ
  /**
   * True when every record a read_committed reader gets in [committed, end) of each partition is in the DLQ (none:
   * only transaction markers or aborted records are left). Re-reads the DLQ when it grew.
   */
  async function onlyDeadLeft(behind: { partition: number; from: number; to: number }[]): Promise<boolean> {
    const left = await Promise.all(
      behind.map(async (b) => ({
        partition: b.partition,
        offsets: await recordOffsets({ brokers: options.brokers, topic: options.topic, ...b }),
      })),
    );
    if (left.every((l) => l.offsets.length === 0)) return true;
    if (!(await admin.hasTopic(dlq))) return false;
    const end = (await admin.partitionOffsets(dlq)).reduce((n, p) => n + p.high, 0);
    if (end !== dlqEnd) {
      dlqEnd = end;
      dead.clear();
      await readTopic({ brokers: options.brokers, topic: dlq }, (m) => {
        if (m.headers['__connect.errors.topic'] !== options.topic) return;
        dead.add(`${m.headers['__connect.errors.partition']}:${m.headers['__connect.errors.offset']}`);
      });
    }
    return left.every((l) => l.offsets.every((o) => dead.has(`${l.partition}:${o}`)));
  }
  try {
    for (;;) {
      const status = await options.connect.connectorStatus(options.connectorName);
      if (status === undefined)
        throw new ServiceError(`no connector named ${options.connectorName}`, 'kafka-connect');
      const failed = status.tasks.find((t) => t.state === 'FAILED');
      if (status.state === 'FAILED' || failed !== undefined) {
        throw new ServiceError(
          `connector ${options.connectorName} FAILED: ${(failed?.trace ?? '').split('\n').slice(0, 3).join(' ')}`,
          'kafka-connect',
        );
      }
      const ends = await admin.partitionOffsets(options.topic);
      const committed = await admin.committedOffsets(`connect-${options.connectorName}`, options.topic);
      const behind = ends.filter((p) => p.high > 0 && (committed.get(p.partition) ?? -1) < p.high);
      if (behind.length === 0) return;
      const gaps = behind.map((p) => ({
        partition: p.partition,
        from: Math.max(committed.get(p.partition) ?? 0, p.low),
        to: p.high,
      }));
      if (gaps.every((g) => g.to - g.from <= 100) && (await onlyDeadLeft(gaps))) return;
      if (Date.now() > deadline) {
        throw new AbortedError(
          `connector ${options.connectorName} still behind on ${options.topic} after ${timeoutMs} ms (partitions ${behind
            .map((p) => `${p.partition}: ${committed.get(p.partition) ?? 'none'}/${p.high}`)
            .join(', ')})`,
        );
      }
      await sleep(pollMs);
    }
  } finally {
    await admin.disconnect();
  }
}

export interface WaitForSinksOptions {
  connect: ConnectClient;
  brokers: string[];
  /** Each connector's topic is its resource's under this prefix. */
  topicPrefix: string;
  /** Per connector. @default 300000 */
  timeoutMs?: number | undefined;
  /** Called as each connector has caught up (before the next is waited for). */
  onCaughtUp?: ((connectorName: string) => void) | undefined;
}

/** Waits for each sink connector in turn until it has consumed its resource's topic ({@link waitForSink}). */
export async function waitForSinks(
  connectors: readonly { name: string; resource: ResourceName }[],
  options: WaitForSinksOptions,
): Promise<void> {
  for (const connector of connectors) {
    await waitForSink({
      connect: options.connect,
      brokers: options.brokers,
      connectorName: connector.name,
      topic: topicName(options.topicPrefix, connector.resource),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
    options.onCaughtUp?.(connector.name);
  }
}
