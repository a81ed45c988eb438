// A worker killed mid-commit leaves its transaction open on the checkpoint partition. Until it ends, every other
// slice's recovery read on that partition waits (checkpoint-recovery-open-transaction.test.ts), and without a fence it
// ends only at the broker's transaction timeout. `fenceTaken`, which the liveness sweep calls with the dead worker's
// slices before they go back to wait, fences their owners at once: the open transaction is aborted and the waiting
// recovery read goes on. On the real broker.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import {
  createTopics,
  createTransactionalSlicePublisher,
  checkpointTopicName,
} from '../../../../src/output/kafka/index.js';

const services = createTestServices('txn-takeover-fence');
afterAll(() => services.cleanup());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('fenceTaken on the real broker', () => {
  it("aborts a dead owner's open transaction at once: another slice's recovery read waiting on it goes on", async () => {
    const prefix = services.prefix;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 1 });
    const topic = `${prefix}.donations`;
    const options = {
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
    };
    // The dead worker: its commit of slice A stops before EndTxn (killed there), and its transaction would stay open
    // for a minute: longer than the recovery read waits (45 s), so only a fence can end it within this test.
    let release: () => void = () => undefined;
    const killed = new Promise<void>((r) => (release = r));
    const dead = createTransactionalSlicePublisher({
      ...options,
      transactionTimeoutMs: 60_000,
      beforeEndTxn: () => killed,
    });
    const earlier = createTransactionalSlicePublisher(options);
    const sweeper = createTransactionalSlicePublisher(options);
    const next = createTransactionalSlicePublisher(options);
    try {
      // Slice B committed a checkpoint before, and is taken again later by `next`.
      const b = await earlier.openSlice<{ cursor: string }>('run-1/slice-b');
      const readFrom = await earlier.lastStableOffset('run-1/slice-b');
      b.addPage({ topic, records: [{ key: 'b0', value: 'v' }], dlqTopic: `${topic}.dlq`, deadLetters: [] });
      const b0 = await b.commit({ cursor: 'b0' });
      await b.close();

      // The dead worker's commit of slice A: sent, never ended.
      const a = await dead.openSlice<{ cursor: string }>('run-1/slice-a');
      a.addPage({ topic, records: [{ key: 'a0', value: 'v' }], dlqTopic: `${topic}.dlq`, deadLetters: [] });
      const commitA = a.commit({ cursor: 'a0' }).then(
        () => 'committed',
        (e: unknown) => (e instanceof Error ? e.name : String(e)),
      );
      await sleep(1_000);

      // B's next owner recovers while A's transaction is open: its read waits.
      let recovered = false;
      const taking = next
        .openSlice<{ cursor: string }>('run-1/slice-b', { readFrom: () => Promise.resolve(readFrom) })
        .then((s) => {
          recovered = true;
          return s;
        });
      await sleep(3_000);
      expect(recovered).toBe(false);

      // The sweep found A's worker dead: it fences A's owners (the dead producer's id) before A goes back to wait.
      const fenced = await sweeper.fenceTaken(['run-1/slice-a']);
      expect(fenced).toEqual([expect.stringMatching(new RegExp(`^${prefix}\\.tx\\.`))]);
      const taken = await taking;
      expect(taken.recovered).toMatchObject({ seq: 0, state: { cursor: 'b0' }, offset: b0.offset });
      await taken.close();

      // The dead worker, woken, commits nothing: its producer was fenced.
      release();
      expect(await commitA).not.toBe('committed');
      // A's owners were left by the fence: its next owner has nobody to fence.
      expect(await sweeper.fenceTaken(['run-1/slice-a'])).toEqual([]);
    } finally {
      release();
      for (const p of [dead, earlier, sweeper, next]) await p.close().catch(() => undefined);
    }
  }, 90_000);
});
