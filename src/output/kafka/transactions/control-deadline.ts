/**
 * Deadlines on Kafka's transaction control calls (issue 47): InitProducerId, a transaction's produce requests and its
 * EndTxn (commit or abort), and a fence. Without one a call could retry for minutes inside kafkajs while every slice of
 * the process waited on the one producer they share. After the deadline the caller treats the producer as unknown:
 * the pool replaces it (a new generation, whose InitProducerId ends whatever the old one left), and a slice whose
 * commit timed out is opened again, to learn from Kafka's checkpoint what committed.
 */
import { ControlCallTimeoutError } from '../../../foundation/errors/index.js';

/** A control call's deadline: half again the transaction timeout (the broker aborts what outlives that anyway). */
export function controlDeadlineMs(transactionTimeoutMs: number): number {
  return Math.round(transactionTimeoutMs * 1.5);
}

/**
 * `call`, or a {@link ControlCallTimeoutError} once `ms` have passed; the call's own outcome is then dropped (its
 * rejection handled), since the caller replaces the producer it ran on.
 */
export async function withDeadline<T>(what: string, ms: number, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ControlCallTimeoutError(`Kafka: ${what} did not end within ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([call, expired]);
  } finally {
    clearTimeout(timer);
    call.catch(() => undefined);
  }
}
