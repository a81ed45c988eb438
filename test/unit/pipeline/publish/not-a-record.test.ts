/** Issue 48, item 2: items that are not records are wrapped where the page is read and dead-lettered with where. */
import { MockClient } from '@confluentinc/schemaregistry';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPageEncoder } from '../../../../src/pipeline/publish/publish-page.js';
import { NotARecord, wrapNotARecords } from '../../../../src/pipeline/publish/not-a-record.js';
import { createRecordEncoder } from '../../../../src/output/encoding/record-encoder.js';
import { registerSchemas } from '../../../../src/output/encoding/schema-registration.js';
import { generateResourceSchemas } from '../../../../src/output/encoding/avro-schema.js';
import { HEADER } from '../../../../src/pipeline/publish/dead-letter.js';

const registry = new MockClient({ baseURLs: ['mock://'] });
beforeAll(async () => {
  await registerSchemas({ registry, schemas: generateResourceSchemas(), topicPrefix: 'nr' });
});
const lineage = { runId: 'r', sliceId: 's', sourceOperation: 'donation.getManyPaginated', fetchedAt: 0 };

describe('wrapNotARecords', () => {
  it('wraps null, strings, numbers and arrays with the page cursor and index; records stay as they are', () => {
    const record = { _id: 'a' };
    const out = wrapNotARecords([record, null, 'x', 7, [1]], 'v2.abc');
    expect(out[0]).toBe(record);
    expect(out.slice(1)).toEqual([
      new NotARecord(null, 'v2.abc', 1),
      new NotARecord('x', 'v2.abc', 2),
      new NotARecord(7, 'v2.abc', 3),
      new NotARecord([1], 'v2.abc', 4),
    ]);
  });
});

describe('the page encoder and items that are not records', () => {
  it('dead-letters each with reason not-a-record, its value and its position; the records of the page go on', async () => {
    const encode = createPageEncoder({ encoder: createRecordEncoder({ registry, topicPrefix: 'nr' }) });
    const good = { _id: 'd1', amount: 5, createdAt: '2024-01-01T00:00:00.000Z' };
    const records = wrapNotARecords([good, null, 'd2'], 'v2.cur');
    const page = await encode({ resource: 'donations', records, lineage });
    expect(page.records.map((m) => m.key)).toEqual(['d1']);
    expect(page.deadLetters.map((d) => [d.index, d.reason, d.path])).toEqual([
      [1, 'not-a-record', '$[1]'],
      [2, 'not-a-record', '$[2]'],
    ]);
    expect(page.deadLetterMessages.map((m) => String(m.value))).toEqual(['null', '"d2"']);
    const headers = page.deadLetterMessages[0]?.headers ?? {};
    expect([headers[HEADER.errorReason], headers[HEADER.pageCursor], headers[HEADER.pageIndex]]).toEqual([
      'not-a-record',
      'v2.cur',
      '1',
    ]);
    expect(page.deadLetters[0]?.message).toBe(
      'item 1 of the page read at cursor v2.cur is null, not a record',
    );
  });
});
