/**
 * Whether the Kafka cluster answers: one admin connection (made by the one client factory, so it speaks the
 * configured security) and a metadata request. The worker's service monitor (`cli/service-probes.ts`) asks it
 * repeatedly; a failed check drops the connection so the next one starts clean.
 */
import type { Admin } from 'kafkajs';
import { createKafkaClient, resolveKafkaOptions } from './kafka-sink.js';

export interface ClusterProbe {
  /** Connects if needed and asks for the cluster's metadata. @throws the client's error (the connection is dropped) */
  check(): Promise<void>;
  close(): Promise<void>;
}

export function createClusterProbe(brokers: readonly string[], timeoutMs: number): ClusterProbe {
  let admin: Admin | undefined;
  const drop = async (): Promise<void> => {
    const a = admin;
    admin = undefined;
    await a?.disconnect().catch(() => undefined);
  };
  return {
    async check() {
      try {
        admin ??= createKafkaClient(
          resolveKafkaOptions({
            clientId: 'gamedata-probe',
            brokers,
            connectionTimeoutMs: timeoutMs,
            requestTimeoutMs: timeoutMs,
            retries: 0,
          }),
          { retry: { retries: 0, initialRetryTime: 100, maxRetryTime: 100 } },
        ).admin({ retry: { retries: 0 } });
        await admin.connect();
        await admin.describeCluster();
      } catch (error) {
        await drop();
        throw error;
      }
    },
    close: drop,
  };
}
