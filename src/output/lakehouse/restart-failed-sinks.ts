/**
 * Restarts the failed tasks of the given connectors and says which it restarted. A failed task of Iceberg's sink
 * stays failed until restarted; restarting it is safe (it resumes from the offsets the last table commit covers),
 * and it is what an operator or a supervisor does. Seen here: against Kafka 4.1 with `transaction.version=2`, a
 * sink's coordinator now and then dies at a commit with InvalidTxnStateException ("state is EMPTY, but received
 * transaction marker result to send: COMMIT" on the broker), which fails the task that hosts it
 * (docs/consuming.md, "Lakehouse").
 */
import type { ConnectClient } from '../warehouse/connect-client.js';

export async function restartFailedSinks(
  connect: ConnectClient,
  names: readonly string[],
): Promise<string[]> {
  const restarted: string[] = [];
  for (const name of names) {
    const status = await connect.connectorStatus(name);
    if (status === undefined) continue;
    if (status.state === 'FAILED' || status.tasks.some((t) => t.state === 'FAILED')) {
      await connect.restartFailed(name);
      restarted.push(name);
    }
  }
  return restarted;
}
