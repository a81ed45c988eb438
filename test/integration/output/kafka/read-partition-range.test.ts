// readPartitionRange, the one range reader of the checkpoint recovery read and of recordOffsets, on the real broker:
// a partition of plain records, an aborted transaction and a committed one. It must deliver exactly the committed
// records of [from, to), in order, end when `to` falls right after an abort marker (batches emptied by the
// read_committed filter never reach eachBatch), fail with its own error when the range never fills, and delete its
// throw-away group every time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import { createTestServices } from '../../../helpers/services.js';
import { readPartitionRange } from '../../../../src/output/kafka/readers/read-partition-range.js';

const services = createTestServices('read-partition-range');
const topic = `${services.prefix}.range`;
const kafka = services.kafka;
let admin: Admin;
/** Offset of each key as written. */
const offsetOf = new Map<string, bigint>();

async function write(send: () => Promise<{ baseOffset?: string }[]>, keys: string[]): Promise<void> {
  const [answer] = await send();
  const base = BigInt(answer!.baseOffset!);
  keys.forEach((k, i) => offsetOf.set(k, base + BigInt(i)));
}

/** Waits until the partition's last stable offset is past `offset`: the marker of the transaction holding it is written. */
async function stablePast(offset: bigint): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [part] = await admin.fetchTopicOffsets(topic);
    if (part !== undefined && BigInt(part.high) > offset) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${topic}'s last stable offset did not pass ${offset}`);
}

beforeAll(async () => {
  admin = await services.admin();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  const plain = kafka.producer({ allowAutoTopicCreation: false });
  const aborting = kafka.producer({
    transactionalId: `${topic}.a`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  const committing = kafka.producer({
    transactionalId: `${topic}.c`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await Promise.all([plain.connect(), aborting.connect(), committing.connect()]);
  try {
    const msgs = (keys: string[]) => keys.map((key) => ({ key, value: key }));
    const p = ['p0', 'p1', 'p2', 'p3', 'p4'];
    await write(() => plain.send({ topic, acks: -1, messages: msgs(p) }), p);
    const ta = await aborting.transaction();
    await write(() => ta.send({ topic, acks: -1, messages: msgs(['a1', 'a2']) }), ['a1', 'a2']);
    await ta.abort();
    // EndTxn answers before the coordinator writes the markers: the next records must come after the abort marker.
    await stablePast(offsetOf.get('a2')!);
    const tc = await committing.transaction();
    await write(() => tc.send({ topic, acks: -1, messages: msgs(['c1', 'c2']) }), ['c1', 'c2']);
    await tc.commit();
    await stablePast(offsetOf.get('c2')!);
    await write(() => plain.send({ topic, acks: -1, messages: msgs(['p5']) }), ['p5']);
  } finally {
    await Promise.all([plain, aborting, committing].map((x) => x.disconnect().catch(() => undefined)));
  }
  // The layout the cases below rely on: the abort marker at a2 + 1, c1 after it, the commit marker at c2 + 1, then p5.
  expect(offsetOf.get('c1')).toBe(offsetOf.get('a2')! + 2n);
  expect(offsetOf.get('p5')).toBe(offsetOf.get('c2')! + 2n);
  await stablePast(offsetOf.get('p5')!);
}, 60_000);

afterAll(() => services.cleanup());

/** Reads [from, to) and returns the keys it delivered and the groups it asked to delete. */
async function read(from: bigint, to: bigint, idleTimeoutMs = 20_000) {
  const keys: string[] = [];
  const offsets: bigint[] = [];
  const deleted: string[] = [];
  const groupId = `${topic}.reader.${from}-${to}`;
  const outcome = await readPartitionRange(
    {
      kafka,
      topic,
      partition: 0,
      from,
      to,
      groupId,
      idleTimeoutMs,
      stalled: () => new Error(`no progress in ${from}..${to}`),
      deleteGroup: async (id) => {
        deleted.push(id);
        await admin.deleteGroups([id]);
      },
      maxWaitTimeInMs: 50,
    },
    (m) => {
      keys.push(m.key!.toString());
      offsets.push(BigInt(m.offset));
    },
  ).then(
    () => 'done',
    (error: unknown) => (error as Error).message,
  );
  return { keys, offsets, deleted, groupId, outcome };
}

async function groupsLeft(groupId: string): Promise<boolean> {
  return (await admin.listGroups()).groups.some((g) => g.groupId === groupId);
}

describe('readPartitionRange on the real broker', () => {
  it('delivers exactly the committed records of the range, in offset order, and deletes its group', async () => {
    const r = await read(offsetOf.get('p2')!, offsetOf.get('p5')! + 1n);
    expect(r.outcome).toBe('done');
    expect(r.keys).toEqual(['p2', 'p3', 'p4', 'c1', 'c2', 'p5']);
    expect(r.offsets).toEqual(r.keys.map((k) => offsetOf.get(k)));
    expect(r.deleted).toEqual([r.groupId]);
    expect(await groupsLeft(r.groupId)).toBe(false);
  }, 60_000);

  it('ends at a range end right after an aborted transaction and its marker (nothing there to deliver)', async () => {
    // [p4, c1): p4, then a1 and a2 (aborted) and the abort marker, which the read_committed filter drops.
    const r = await read(offsetOf.get('p4')!, offsetOf.get('c1')!);
    expect(r.outcome).toBe('done');
    expect(r.keys).toEqual(['p4']);
  }, 60_000);

  it('stops before `to` and starts at `from`', async () => {
    const r = await read(offsetOf.get('p1')!, offsetOf.get('p3')!);
    expect(r.outcome).toBe('done');
    expect(r.keys).toEqual(['p1', 'p2']);
  }, 60_000);

  it('fails with its own error when the range never fills, and still deletes its group', async () => {
    const end = offsetOf.get('p5')! + 1n;
    const r = await read(end, end + 5n, 1_500);
    expect(r.outcome).toBe(`no progress in ${end}..${end + 5n}`);
    expect(r.keys).toEqual([]);
    expect(r.deleted).toEqual([r.groupId]);
  }, 60_000);

  it('reads nothing, and makes no group, for an empty range', async () => {
    const r = await read(3n, 3n);
    expect(r.outcome).toBe('done');
    expect(r.keys).toEqual([]);
    expect(r.deleted).toEqual([]);
  }, 60_000);
});
