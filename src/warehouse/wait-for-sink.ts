/**
 * Waits until a sink connector has consumed its topic to the end: the committed offsets of its consumer group
 * (`connect-<name>`) reach the topic's end offsets on every partition. Fails fast when a task is FAILED.
 * Connect commits sink offsets every `offset.flush.interval.ms` (the stack's worker: 2 s) after the rows are written.
 */
import kafkajs from 'kafkajs';
import { AbortedError, ServiceError } from '../errors.js';
import type { ConnectClient } from './connect-client.js';

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
  const { Kafka, logLevel } = kafkajs;
  const admin = new Kafka({
    clientId: 'wait-for-sink',
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
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
      const ends = await admin.fetchTopicOffsets(options.topic);
      const [group] = await admin.fetchOffsets({
        groupId: `connect-${options.connectorName}`,
        topics: [options.topic],
      });
      const committed = new Map((group?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      const behind = ends.filter(
        (p) => Number(p.high) > 0 && (committed.get(p.partition) ?? -1) < Number(p.high),
      );
      if (behind.length === 0) return;
      if (Date.now() > deadline) {
        throw new AbortedError(
          `connector ${options.connectorName} still behind on ${options.topic} after ${timeoutMs} ms (partitions ${behind
            .map((p) => `${p.partition}: ${committed.get(p.partition) ?? 'none'}/${p.high}`)
            .join(', ')})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    await admin.disconnect();
  }
}
