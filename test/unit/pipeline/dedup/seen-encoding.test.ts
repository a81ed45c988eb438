import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketAddress,
  bucketCount,
  bucketHash,
  counterLowFromAddress,
  decodeVersion,
  encodeVersion,
  idEntry,
  MIN_LEVEL,
  nextTable,
  parseObjectId,
  processPart,
  TIME_VERSION_BASE,
  versionBytes,
  versionCovered,
  versionReplaces,
} from '../../../../src/pipeline/dedup/seen-encoding.js';

const oidBytes = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((a) => Buffer.from(a));
const table = fc
  .record({ level: fc.integer({ min: MIN_LEVEL, max: 24 }), split: fc.nat() })
  .map((t) => ({ level: t.level, split: t.split % 2 ** t.level }));
const processIndex = fc.integer({ min: 1, max: 65_535 });
// ms from 2020-01-01 to 2054 (the range the 40-bit code holds)
const timeMs = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2054, 0, 1) });

/** Rebuilds the 12 ObjectId bytes from what the layout keeps: the entry, the bucket address, the process part. */
function rebuild(entry: Buffer, address: number, part: Buffer): Buffer {
  const b = Buffer.alloc(12);
  entry.copy(b, 0, 1, 5);
  part.copy(b, 4);
  b[9] = entry[5]!;
  b[10] = entry[0]! ^ entry[4]!;
  b[11] = counterLowFromAddress(entry, address);
  return b;
}

describe('ObjectId entries', () => {
  it('only canonical lower-case 24-hex ids are ObjectIds (others go to the exact fallback)', () => {
    expect(parseObjectId('698c8fd256f71dd42526bfe2')?.toString('hex')).toBe('698c8fd256f71dd42526bfe2');
    for (const odd of [
      '698C8FD256F71DD42526BFE2',
      '698c8fd256f71dd42526bfe',
      '698c8fd256f71dd42526bfe2 ',
      '42',
      '',
    ])
      expect(parseObjectId(odd)).toBeUndefined();
  });

  it('entry + bucket address + process part give back the exact id, under any table (property)', () => {
    fc.assert(
      fc.property(oidBytes, processIndex, table, (oid, pi, t) => {
        const entry = idEntry(oid, pi);
        expect(entry).toHaveLength(8);
        expect(entry.readUInt16BE(6)).toBe(pi);
        const address = bucketAddress(bucketHash(entry, oid[11]!), t);
        expect(address).toBeLessThan(bucketCount(t));
        expect(rebuild(entry, address, processPart(oid)).equals(oid)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('two different ids never share bucket and entry (no false positives), same dictionary (property)', () => {
    fc.assert(
      fc.property(oidBytes, oidBytes, table, (a, b, t) => {
        fc.pre(!a.equals(b));
        // One process dictionary: equal process parts share an index, different parts get different ones.
        const ia = 1;
        const ib = processPart(a).equals(processPart(b)) ? 1 : 2;
        const ea = idEntry(a, ia);
        const eb = idEntry(b, ib);
        const aa = bucketAddress(bucketHash(ea, a[11]!), t);
        const ab = bucketAddress(bucketHash(eb, b[11]!), t);
        expect(aa === ab && ea.equals(eb)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('sequential counters spread evenly over the buckets', () => {
    const t = { level: 10, split: 0 };
    const counts = new Array<number>(bucketCount(t)).fill(0);
    const oid = Buffer.from('6900000056f71dd425000000', 'hex');
    for (let i = 0; i < 200_000; i++) {
      oid.writeUInt32BE(0x69000000 + Math.floor(i / 9), 0);
      oid.writeUIntBE(i, 9, 3);
      counts[bucketAddress(bucketHash(idEntry(oid, 1), oid[11]!), t)]!++;
    }
    const mean = 200_000 / counts.length;
    expect(Math.max(...counts)).toBeLessThan(mean * 1.6);
    expect(Math.min(...counts)).toBeGreaterThan(mean * 0.4);
  });
});

describe('linear hashing', () => {
  it('a split moves entries only out of the split bucket, to split + 2^level (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 - 1 }), table, (hash, t) => {
        const before = bucketAddress(hash, t);
        const after = bucketAddress(hash, nextTable(t));
        if (before !== t.split) expect(after).toBe(before);
        else expect([t.split, t.split + 2 ** t.level]).toContain(after);
      }),
      { numRuns: 3000 },
    );
  });

  it('the table grows one bucket per split and doubles its level after 2^level splits', () => {
    let t = { level: MIN_LEVEL, split: 0 };
    for (let i = 0; i < 256; i++) t = nextTable(t);
    expect(t).toEqual({ level: MIN_LEVEL + 1, split: 0 });
    expect(bucketCount(nextTable(t))).toBe(513);
  });
});

describe('versions', () => {
  it('ISO times with ms keep their order and come back exactly (property)', () => {
    fc.assert(
      fc.property(timeMs, timeMs, (a, b) => {
        const [ia, ib] = [new Date(a).toISOString(), new Date(b).toISOString()];
        const [ca, cb] = [encodeVersion(ia)!, encodeVersion(ib)!];
        expect(ca).toBeGreaterThanOrEqual(TIME_VERSION_BASE);
        expect(Math.sign(ca - cb)).toBe(Math.sign(a - b));
        expect(decodeVersion(ca)).toBe(ia);
        expect(versionBytes(ca).readUIntBE(0, 5)).toBe(ca);
      }),
    );
  });

  it('integers (__v) are their own code; anything else has none (exact fallback by text)', () => {
    expect(encodeVersion('0')).toBe(0);
    expect(encodeVersion('17')).toBe(17);
    expect(decodeVersion(17)).toBe('17');
    for (const odd of [
      '2026-01-01T00:00:00Z', // no ms: a different text of maybe the same time
      '2026-01-01T00:00:00.000+00:00',
      '2026-02-30T00:00:00.000Z', // not a real date: would not come back as the same text
      '2019-12-31T23:59:59.999Z', // before the epoch
      '2055-01-01T00:00:00.000Z', // past the 40-bit range
      '01',
      '-1',
      '1e3',
      '4294967296',
      '',
    ])
      expect(encodeVersion(odd), odd).toBeUndefined();
  });

  it('a version is covered by the same or a newer one of its kind, never by one of the other kind', () => {
    const t = (iso: string): number => encodeVersion(iso)!;
    const v1 = t('2026-01-01T00:00:00.000Z');
    const v2 = t('2026-01-01T00:00:00.001Z');
    expect(versionCovered(v2, v1)).toBe(true); // stale: a newer one was published
    expect(versionCovered(v1, v1)).toBe(true);
    expect(versionCovered(v1, v2)).toBe(false);
    expect(versionCovered(v2, 3)).toBe(false);
    expect(versionCovered(3, v1)).toBe(false);
    expect(versionReplaces(v1, v2)).toBe(true);
    expect(versionReplaces(v2, v1)).toBe(false);
    expect(versionReplaces(v2, 3)).toBe(true); // kind changed: the latest seen is what was marked last
    expect(versionReplaces(3, 3)).toBe(false);
  });
});
