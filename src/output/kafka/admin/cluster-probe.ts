/**
 * Whether the Kafka cluster answers: one admin connection (made by the one client factory, so it speaks the
 * configured security) and a metadata request. The worker's service monitor (`cli/service-probes.ts`) asks it
 * repeatedly; a failed check drops the connection so the next one starts clean.
 */
import type { Admin } from 'kafkajs';
import { createKafkaClient } from '../kafka-client.js';
import { resolveKafkaOptions } from '../kafka-options.js';
import { ClosedError } from '../../../foundation/errors/index.js';

export interface ClusterProbe {
  /** Connects if needed and asks for the cluster's metadata. @throws the client's error (the connection is dropped) */
  check(): Promise<void>;
  close(): Promise<void>;
}

export function createClusterProbe(brokers: readonly string[], timeoutMs: number): ClusterProbe {
  let admin: Admin | undefined;
  let closed = false;
  const drop = async (): Promise<void> => {
    const a = admin;
    admin = undefined;
    await a?.disconnect().catch(() => undefined);
  };
  return {
    async check() {
      if (closed) throw new ClosedError('the Kafka probe is closed');
      const a = (admin ??= createKafkaClient(
        resolveKafkaOptions({
          clientId: 'gamedata-probe',
          brokers,
          connectionTimeoutMs: timeoutMs,
          requestTimeoutMs: timeoutMs,
          retries: 0,
        }),
        { retry: { retries: 0, initialRetryTime: 100, maxRetryTime: 100 } },
      ).admin({ retry: { retries: 0 } }));
      try {
        await a.connect();
        await a.describeCluster();
      } catch (error) {
        if (admin === a) await drop();
        else await a.disconnect().catch(() => undefined);
        throw error;
      }
      // Dropped or closed while it connected (a disconnect during kafkajs' connect leaves the connection that
      // connect then opens): close it now, or its socket keeps a closed worker alive.
      if (admin !== a) {
        await a.disconnect().catch(() => undefined);
        if (closed) throw new ClosedError('the Kafka probe is closed');
      }
    },
    async close() {
      closed = true;
      await drop();
    },
  };
}
