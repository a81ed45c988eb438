/**
 * The scripts' record arguments (`internal/seen-set-lua.ts`): the layout the Lua reads at fixed offsets
 * (`idarg`, `entry_key`: the ObjectId at 2..13, the entry at 14..21 with the process index at 20..21, the 40-bit bucket
 * hash at 22..26, 1-based), and ids without a hint.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordArgs } from '../../../../src/pipeline/dedup/internal/seen-set-lua.js';
import { bucketHash, idEntry, processPart } from '../../../../src/pipeline/dedup/seen-encoding.js';

describe('recordArgs', () => {
  it('an ObjectId with a known process index carries its entry and bucket hash at the offsets the Lua reads', () => {
    for (let i = 0; i < 200; i++) {
      const oid = randomBytes(12);
      const pi = 1 + ((i * 331) % 65_535);
      const asked: Buffer[] = [];
      const [arg, code, raw] = recordArgs([{ id: oid.toString('hex'), version: '' }], false, (part) => {
        asked.push(Buffer.from(part));
        return pi;
      });
      expect(asked).toEqual([processPart(oid)]);
      const a = arg as Buffer;
      expect(a.length).toBe(26);
      expect(String.fromCharCode(a[0]!)).toBe('o');
      expect(a.subarray(1, 13)).toEqual(oid);
      expect(a.subarray(13, 21)).toEqual(idEntry(oid, pi));
      expect(a.readUInt16BE(19)).toBe(pi);
      expect(a.readUIntBE(21, 5)).toBe(bucketHash(idEntry(oid, pi), oid[11]!));
      expect([code, raw]).toEqual(['', '']);
    }
  });

  it('without an index (unknown part, or no lookup) the id is its 12 bytes; other ids are their text', () => {
    const oid = randomBytes(12);
    const entries = [{ id: oid.toString('hex'), version: '' }];
    for (const of of [undefined, () => undefined]) {
      const [arg] = recordArgs(entries, false, of);
      expect(arg).toEqual(Buffer.concat([Buffer.from('o'), oid]));
    }
    expect(recordArgs([{ id: 'not-an-object-id', version: '' }], false, () => 5)).toEqual([
      'tnot-an-object-id',
      '',
      '',
    ]);
  });
});
