// The read_committed filter that replaces kafkajs 2.2.4's: Kafka lists a fetch's aborted transactions in the order
// their abort markers were written, and kafkajs' filterAbortedMessages assumes first-offset order (one activation per
// record), so records of a transaction that began before, and was aborted after, another aborted one pass as
// committed. Runs kafkajs' own Batch (what eachBatch receives) on a fetch response as Kafka returns it.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  markAbortedRecords,
  type FetchedRecord,
} from '../../../../../src/output/kafka/kafkajs-patches/read-committed-filter.js';

const require = createRequire(import.meta.url);
const Batch = require('kafkajs/src/consumer/batch.js') as new (
  topic: string,
  fetchedOffset: string,
  partitionData: unknown,
) => { messages: FetchedRecord[]; lastOffset(): string; isEmptyDueToFiltering(): boolean };

const COMMIT = Buffer.from([0, 0, 0, 1]);
const ABORT = Buffer.from([0, 0, 0, 0]);
const rec = (offset: number, producerId: string, key: string): FetchedRecord => ({
  offset: String(offset),
  key: Buffer.from(key),
  batchContext: { producerId, inTransaction: true },
});
const marker = (offset: number, producerId: string, key: Buffer): FetchedRecord => ({
  offset: String(offset),
  key,
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});

/** B begins (0, 1), A begins (2), B writes again (3), A aborts (4), B aborts (5), C commits (6, marker 7). */
function partition() {
  return {
    partition: 0,
    highWatermark: '8',
    messages: [
      rec(0, 'B', 'b1'),
      rec(1, 'B', 'b2'),
      rec(2, 'A', 'a1'),
      rec(3, 'B', 'b3'),
      marker(4, 'A', ABORT),
      marker(5, 'B', ABORT),
      rec(6, 'C', 'c1'),
      marker(7, 'C', COMMIT),
    ],
    // The transaction index order: A's abort marker was written first.
    abortedTransactions: [
      { producerId: 'A', firstOffset: '2' },
      { producerId: 'B', firstOffset: '0' },
    ],
  };
}
const keys = (b: { messages: FetchedRecord[] }): string[] => b.messages.map((m) => m.key?.toString() ?? '');

describe('markAbortedRecords (the read_committed filter)', () => {
  it('kafkajs 2.2.4 alone lets the records of B before A began through', () => {
    expect(keys(new Batch('t', '0', partition()))).toEqual(['b1', 'b2', 'c1']);
  });

  it('with the filter applied to the fetch response, kafkajs yields the committed records only', () => {
    const p = partition();
    expect(markAbortedRecords(p.messages, p.abortedTransactions)).toBe(4);
    const batch = new Batch('t', '0', { ...p, abortedTransactions: [] });
    expect(keys(batch)).toEqual(['c1']);
    expect(batch.lastOffset()).toBe('7');
  });

  it('a fetch of aborted records only is empty by filtering (offsets move on), and a producer aborted then committed is read after its abort marker', () => {
    const only = [rec(10, 'P', 'p1'), rec(11, 'P', 'p2')];
    markAbortedRecords(only, [{ producerId: 'P', firstOffset: '10' }]);
    const batch = new Batch('t', '10', {
      partition: 0,
      highWatermark: '20',
      messages: only,
      abortedTransactions: [],
    });
    expect(batch.messages).toEqual([]);
    expect(batch.isEmptyDueToFiltering()).toBe(true);
    expect(batch.lastOffset()).toBe('11');

    const again = [
      rec(0, 'P', 'x1'),
      marker(1, 'P', ABORT),
      rec(2, 'P', 'y1'),
      marker(3, 'P', COMMIT),
      rec(4, 'P', 'z1'),
      marker(5, 'P', ABORT),
      { offset: '6', key: Buffer.from('plain'), batchContext: { producerId: '-1', inTransaction: false } },
    ];
    markAbortedRecords(again, [
      { producerId: 'P', firstOffset: '4' },
      { producerId: 'P', firstOffset: '0' },
    ]);
    expect(again.filter((m) => m.isControlRecord !== true).map((m) => m.key?.toString())).toEqual([
      'y1',
      'plain',
    ]);
  });

  it('a transaction that began before the fetch (first offset below it) is aborted from the first record', () => {
    const records = [
      rec(50, 'Q', 'q1'),
      rec(51, 'R', 'r1'),
      rec(52, 'Q', 'q2'),
      marker(53, 'Q', ABORT),
      marker(54, 'R', ABORT),
    ];
    markAbortedRecords(records, [
      { producerId: 'R', firstOffset: '45' },
      { producerId: 'Q', firstOffset: '40' },
    ]);
    expect(records.filter((m) => m.isControlRecord !== true)).toEqual([]);
  });
});
