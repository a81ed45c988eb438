import { describe, expect, it } from 'vitest';
import {
  proposeAbsorption,
  type DriftRecord,
  type DriftStore,
} from '../../../../src/pipeline/drift/index.js';
import { withOptionalField } from '../../../../src/output/encoding/schema-candidate.js';
import { generateAvroSchema } from '../../../../src/output/encoding/avro-schema.js';
import { Transaction, Election } from '../../../../src/foundation/models/catalogue.js';
import { buildDriftReport, formatDriftReport } from '../../../../src/app/cli/drift-report.js';
import { FieldExistsError, ValidationError } from '../../../../src/foundation/errors/index.js';

const rec = (over: Partial<DriftRecord>): DriftRecord => ({
  kind: 'new_field',
  path: 'sellerMuId',
  count: 10,
  types: { string: 10 },
  firstSeenMs: Date.parse('2026-11-01T00:00:00.000Z'),
  lastSeenMs: Date.parse('2026-11-02T00:00:00.000Z'),
  ...over,
});

describe('proposeAbsorption', () => {
  it('proposes an optional field of the dominant JSON type at its level', () => {
    expect(proposeAbsorption('transactions', rec({}))).toEqual({
      field: 'sellerMuId',
      parentPath: '',
      kind: 'string',
      text: 'sellerMuId: t.string optional at transactions',
      mixedTypes: false,
    });
    expect(
      proposeAbsorption(
        'transactions',
        rec({ path: 'item.level', types: { integer: 3, null: 9, number: 1 } }),
      ),
    ).toMatchObject({ field: 'level', parentPath: 'item', kind: 'integer', mixedTypes: true });
    expect(proposeAbsorption('x', rec({ types: { object: 1 } }))?.text).toBe(
      'sellerMuId: t.json optional at x',
    );
  });

  it('proposes nothing for a type change or a field only seen as null', () => {
    expect(proposeAbsorption('transactions', rec({ kind: 'type_changed', path: 'money' }))).toBeUndefined();
    expect(proposeAbsorption('transactions', rec({ types: { null: 4 } }))).toBeUndefined();
  });
});

describe('withOptionalField', () => {
  const schema = generateAvroSchema(Transaction);

  it('adds ["null", type] with default null before _extra, at the root and in a sub-record', () => {
    const top = withOptionalField(schema, '', 'sellerMuId', 'string');
    const names = top.fields.map((f) => f.name);
    expect(names.at(-1)).toBe('_extra');
    expect(names.at(-2)).toBe('sellerMuId');
    expect(top.fields.at(-2)).toEqual({ name: 'sellerMuId', type: ['null', 'string'], default: null });
    expect(schema.fields.some((f) => f.name === 'sellerMuId')).toBe(false); // a copy
    const nested = withOptionalField(schema, 'item', 'level', 'integer');
    expect(JSON.stringify(nested)).toContain('{"name":"level","type":["null","long"],"default":null}');
  });

  it('walks into array elements and refuses paths that name no record or a field that exists', () => {
    const election = generateAvroSchema(Election);
    const out = withOptionalField(election, 'candidates[]', 'foo', 'boolean');
    expect(JSON.stringify(out)).toContain(
      '{"name":"isElected","type":["null","boolean"],"default":null},{"name":"foo","type":["null","boolean"],"default":null}',
    );
    expect(() => withOptionalField(schema, 'nope', 'x', 'string')).toThrow(ValidationError);
    expect(() => withOptionalField(schema, '', 'money', 'string')).toThrow(/already has money/);
  });

  it('a field that exists is a FieldExistsError, a path with no record is not (issue 48: decided by class, not text)', () => {
    const thrown = (f: () => unknown): unknown => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(thrown(() => withOptionalField(schema, '', 'money', 'string'))).toBeInstanceOf(FieldExistsError);
    const noRecord = thrown(() => withOptionalField(schema, 'nope', 'x', 'string'));
    expect(noRecord).toBeInstanceOf(ValidationError);
    expect(noRecord).not.toBeInstanceOf(FieldExistsError);
  });
});

describe('drift report', () => {
  const store: DriftStore = {
    record: () => Promise.resolve(),
    clear: () => Promise.resolve(),
    read: () =>
      Promise.resolve([
        {
          resource: 'transactions',
          dropped: 0,
          records: [rec({}), rec({ kind: 'type_changed', path: 'money', types: { string: 2 }, count: 2 })],
        },
      ]),
  };

  it('asks the registry about each absorbable path and says its verdict', async () => {
    const asked: unknown[] = [];
    const report = await buildDriftReport(store, (o) => {
      asked.push(o);
      return Promise.resolve({ subject: 'p.transactions-value', compatible: false });
    });
    expect(asked).toEqual([{ resource: 'transactions', parentPath: '', name: 'sellerMuId', kind: 'string' }]);
    expect(report[0]).toMatchObject({
      absorb: 'sellerMuId: t.string optional at transactions',
      compatible: false,
    });
    const text = formatDriftReport(report);
    expect(text).toContain(
      'transactions: sellerMuId  new_field  10 records (string 10), first seen 2026-11-01',
    );
    expect(text).toContain('the registry (p.transactions-value) would REJECT it');
    expect(text).toContain('money  type_changed');
    expect(text).toContain('no compatible catalogue change');
    expect(formatDriftReport([])).toBe('no schema drift recorded');
  });
});
