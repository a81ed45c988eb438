// Exactly-once on pooled producers and shared transactions, on the real broker:
// - the transactional.ids a publisher leaves on the brokers are its pool, however many slices it ran (listed through
//   Kafka's own admin API: TransactionsCommand list, Java AdminClient.listTransactions);
// - a stalled owner whose slice was taken commits nothing when it wakes, and the other slices that shared its producer
//   fail their commit (their producer was fenced) and go on when opened again: every record once.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import {
  checkpointTopicName,
  createMemorySliceOwners,
  createTopics,
  createTransactionalSlicePublisher,
  readTopic,
  type SinkMessage,
} from '../../../../src/output/kafka/index.js';
import { SliceFencedError } from '../../../../src/foundation/errors/index.js';

const services = createTestServices('pooled-producers');
afterAll(() => services.cleanup());

const page = (tag: string, n: number): SinkMessage[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: `v-${tag}-${i}` }));

async function keys(topic: string): Promise<string[]> {
  const out: string[] = [];
  await readTopic({ brokers: services.urls.kafkaBrokers, topic, idleTimeoutMs: 20_000 }, (m) => {
    out.push(m.key?.toString() ?? '');
  });
  return out.sort();
}

/** Transactional ids the brokers keep that start with `prefix` (Kafka's TransactionsCommand, the stack's jars). */
async function listTransactionalIds(prefix: string): Promise<string[]> {
  const stackDir = process.env.STACK_DIR ?? join(import.meta.dirname, '../../../../.stack');
  const libs = join(stackDir, 'kafka', 'libs');
  if (!existsSync(libs))
    throw new Error(`no Kafka jars at ${libs}: the test needs the stack's Kafka (scripts/stack.sh)`);
  const { stdout } = await promisify(execFile)(
    'java',
    [
      '-Xmx256m',
      '-cp',
      `${libs}/*`,
      'org.apache.kafka.tools.TransactionsCommand',
      '--bootstrap-server',
      services.urls.kafkaBrokers.join(','),
      'list',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter((id) => id.startsWith(prefix));
}

describe('pooled transactional producers on the real broker', () => {
  it('40 slices leave the pool ids on the brokers, not one per slice; every record once', async () => {
    const prefix = `${services.prefix}-ids`;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 3 });
    const topic = `${prefix}.donations`;
    const publisher = createTransactionalSlicePublisher({
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
      member: () => 'm0',
      producers: 2,
      owners: createMemorySliceOwners(new Map()),
    });
    try {
      const slices = Array.from({ length: 40 }, (_, i) => `run/slice-${i}`);
      for (let i = 0; i < slices.length; i += 10) {
        await Promise.all(
          slices.slice(i, i + 10).map(async (slice) => {
            const s = await publisher.openSlice<object>(slice);
            s.addPage({ topic, records: page(slice, 5), dlqTopic: `${topic}.dlq`, deadLetters: [] });
            await s.commit({});
            s.addPage({ topic, records: page(`${slice}-b`, 3), dlqTopic: `${topic}.dlq`, deadLetters: [] });
            await s.commit({ done: true });
            await s.close();
          }),
        );
      }
      const stats = publisher.stats();
      expect(stats.producers).toBe(2);
      expect(stats.commits).toBe(80);
      // Shared transactions: fewer than the slices' commits (10 slices commit at once on 2 producers).
      expect(stats.transactions).toBeLessThan(80);
      const ids = await listTransactionalIds(`${prefix}.tx.`);
      expect(ids.sort()).toEqual([`${prefix}.tx.m0.0`, `${prefix}.tx.m0.1`]);
      const expected = slices.flatMap((s) => [...page(s, 5), ...page(`${s}-b`, 3)].map((m) => m.key ?? ''));
      expect(await keys(topic)).toEqual(expected.sort());
    } finally {
      await publisher.close();
    }
  });

  it("a transaction lingers for the commits of its producer's other slices, and not for slices that are not there", async () => {
    const prefix = `${services.prefix}-linger`;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 3 });
    const topic = `${prefix}.donations`;
    const dlqTopic = `${topic}.dlq`;
    // A linger far longer than the test: a transaction that waited it out would show as a 20 s commit.
    const lingerMs = 20_000;
    const publisher = createTransactionalSlicePublisher({
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
      member: () => 'm0',
      producers: 1,
      lingerMs,
      lingerCommits: 8,
      owners: createMemorySliceOwners(new Map()),
    });
    try {
      // Four slices on the one producer commit 50 ms apart: one transaction, started by the fourth commit.
      const sessions = await Promise.all(
        ['r/A', 'r/B', 'r/C', 'r/D'].map((k) => publisher.openSlice<object>(k)),
      );
      const t0 = Date.now();
      const commits: Promise<unknown>[] = [];
      for (const [i, s] of sessions.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 50));
        s.addPage({ topic, records: page(`four-${i}`, 3), dlqTopic, deadLetters: [] });
        commits.push(s.commit({ done: true }));
      }
      await Promise.all(commits);
      expect(Date.now() - t0).toBeLessThan(lingerMs);
      expect(publisher.stats()).toMatchObject({ commits: 4, transactions: 1 });
      for (const s of sessions) await s.close();
      // A lone slice: nobody else is bound, so its transaction starts at once.
      const lone = await publisher.openSlice<object>('r/E');
      const t1 = Date.now();
      lone.addPage({ topic, records: page('lone', 3), dlqTopic, deadLetters: [] });
      await lone.commit({ done: true });
      expect(Date.now() - t1).toBeLessThan(lingerMs);
      await lone.close();
      expect(publisher.stats()).toMatchObject({ commits: 5, transactions: 2 });
      const expected = [0, 1, 2, 3].flatMap((i) => page(`four-${i}`, 3)).concat(page('lone', 3));
      expect(await keys(topic)).toEqual(expected.map((m) => m.key ?? '').sort());
    } finally {
      await publisher.close();
    }
  });

  it('a stalled owner whose slice was taken commits nothing; its producer-mates fail and go on when reopened', async () => {
    const prefix = `${services.prefix}-zombie`;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 3 });
    const topic = `${prefix}.donations`;
    const owners = createMemorySliceOwners(new Map());
    const options = {
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
      producers: 1,
      owners,
    };
    const a = createTransactionalSlicePublisher({ ...options, member: () => 'a' });
    const b = createTransactionalSlicePublisher({ ...options, member: () => 'b' });
    try {
      const dlqTopic = `${topic}.dlq`;
      // Process A runs slices S and T on its one producer; S commits a page, then A stalls with pages of both.
      const s = await a.openSlice<object>('r/S');
      const readFrom = await a.lastStableOffset('r/S');
      s.addPage({ topic, records: page('s0', 4), dlqTopic, deadLetters: [] });
      await s.commit({ at: 's0' });
      const t = await a.openSlice<object>('r/T');
      s.addPage({ topic, records: page('s1-zombie', 4), dlqTopic, deadLetters: [] });
      t.addPage({ topic, records: page('t0', 4), dlqTopic, deadLetters: [] });
      // Process B takes S (A's lock expired): it fences A's producer, then recovers S's checkpoint exactly.
      const taken = await b.openSlice<{ at: string }>('r/S', { readFrom: () => Promise.resolve(readFrom) });
      expect(taken.recovered).toMatchObject({ seq: 0, state: { at: 's0' } });
      expect(b.stats().fences).toBe(1);
      // A wakes: S commits nothing; T, which shared the fenced producer, fails too.
      await expect(s.commit({ at: 's1' })).rejects.toBeInstanceOf(SliceFencedError);
      await expect(t.commit({ at: 't0' })).rejects.toBeInstanceOf(SliceFencedError);
      await s.close();
      await t.close();
      // B goes on with S; T opened again on A (a new generation of A's producer) goes on as well.
      taken.addPage({ topic, records: page('s1', 4), dlqTopic, deadLetters: [] });
      await taken.commit({ at: 's1' });
      await taken.close();
      const again = await a.openSlice<object>('r/T');
      again.addPage({ topic, records: page('t0', 4), dlqTopic, deadLetters: [] });
      await again.commit({ at: 't0' });
      await again.close();
      const expected = [...page('s0', 4), ...page('s1', 4), ...page('t0', 4)].map((m) => m.key ?? '');
      expect(await keys(topic)).toEqual(expected.sort());
      // Resolving an orphaned page of S written by A's old producer fences nothing now (B's takeover fenced it and
      // forgot it); B, S's current owner, is not fenced by it.
      const fencesBefore = b.stats().fences;
      await b.fenceWriter('r/S', `${prefix}.tx.a.0`);
      expect(b.stats().fences).toBe(fencesBefore);
      // Clean sessions leave no owner behind.
      expect(await owners.list('r/S')).toEqual([]);
      expect(await owners.list('r/T')).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a second session of one slice in the same process (a stalled job given back to its own worker) fences the first', async () => {
    const prefix = `${services.prefix}-same`;
    await createTopics({ brokers: services.urls.kafkaBrokers, topicPrefix: prefix, partitions: 3 });
    const topic = `${prefix}.donations`;
    const publisher = createTransactionalSlicePublisher({
      brokers: services.urls.kafkaBrokers,
      checkpointTopic: checkpointTopicName(prefix),
      transactionalIdPrefix: `${prefix}.tx`,
      member: () => 'm0',
      producers: 1,
      owners: createMemorySliceOwners(new Map()),
    });
    try {
      const dlqTopic = `${topic}.dlq`;
      const first = await publisher.openSlice<object>('r/S');
      const readFrom = await publisher.lastStableOffset('r/S');
      first.addPage({ topic, records: page('p0', 3), dlqTopic, deadLetters: [] });
      await first.commit({ at: 'p0' });
      first.addPage({ topic, records: page('p1-first', 3), dlqTopic, deadLetters: [] });
      // The same slice opened again in this process: it gets a producer of its own and fences the first's.
      const second = await publisher.openSlice<{ at: string }>('r/S', {
        readFrom: () => Promise.resolve(readFrom),
      });
      expect(second.recovered).toMatchObject({ seq: 0, state: { at: 'p0' } });
      await expect(first.commit({ at: 'p1' })).rejects.toBeInstanceOf(SliceFencedError);
      await first.close();
      second.addPage({ topic, records: page('p1', 3), dlqTopic, deadLetters: [] });
      await second.commit({ at: 'p1' });
      await second.close();
      expect(publisher.stats()).toMatchObject({ producers: 2, fences: 1 });
      const expected = [...page('p0', 3), ...page('p1', 3)].map((m) => m.key ?? '');
      expect(await keys(topic)).toEqual(expected.sort());
    } finally {
      await publisher.close();
    }
  });
});
