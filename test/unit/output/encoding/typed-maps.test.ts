/**
 * The typed maps of issue 13 (`finishedTours`: string -> boolean, `equippedSkinKeys`: string -> string, as the
 * original Python client declares them): the catalogue checks them, the simulator generates them, and the Avro
 * change is BACKWARD_TRANSITIVE: the schema before them reads as the same record, a record written before them
 * decodes (from the JSON string) with the new reader, and our diff finds no break.
 */
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { fromAvroValue, toAvroValue } from '../../../../src/output/encoding/avro-mapping.js';
import {
  generateAvroSchema,
  typedMapFieldName,
  type AvroRecordSchema,
} from '../../../../src/output/encoding/avro-schema.js';
import { AVRO_TYPE_OPTIONS } from '../../../../src/output/encoding/avro-types.js';
import { diffSchemas } from '../../../../src/output/encoding/schema-diff.js';
import { User } from '../../../../src/foundation/models/catalogue.js';
import { checkRecord } from '../../../../src/foundation/models/check-record.js';
import { createWorld } from '../../../../tools/simulator/index.js';

type Obj = Record<string, unknown>;

/** The users schema as registered before the typed maps: the `<name>Map` fields left out. */
function schemaBeforeTypedMaps(): AvroRecordSchema {
  const schema = generateAvroSchema(User);
  const typed = new Set(['finishedTours', 'equippedSkinKeys'].map(typedMapFieldName));
  return { ...schema, fields: schema.fields.filter((f) => !typed.has(f.name)) };
}

const user: Obj = {
  _id: '0123456789abcdef01234567',
  username: 'ada',
  finishedTours: { welcome: true, market: false },
  equippedSkinKeys: { weapon: 'weapon-skin-gold' },
};

describe('typed maps: finishedTours and equippedSkinKeys', () => {
  it('the catalogue checks each value: a non-boolean tour or a non-string skin key is an issue', () => {
    expect(checkRecord(User, user)).toEqual([]);
    const bad = { ...user, finishedTours: { welcome: 'yes' }, equippedSkinKeys: { weapon: 3 } };
    expect(checkRecord(User, bad).map((i) => i.path)).toEqual([
      'equippedSkinKeys.weapon',
      'finishedTours.welcome',
    ]);
    expect(checkRecord(User, { ...user, finishedTours: ['welcome'] }).map((i) => i.path)).toEqual([
      'finishedTours',
    ]);
  });

  it('the simulator generates the real shapes (string -> boolean, string -> string)', () => {
    const users = createWorld({ seed: 7, scale: 'small' }).truth('users');
    let tours = 0;
    let skins = 0;
    for (const u of users) {
      for (const v of Object.values((u['finishedTours'] ?? {}) as Obj)) {
        expect(typeof v).toBe('boolean');
        tours += 1;
      }
      for (const v of Object.values((u['equippedSkinKeys'] ?? {}) as Obj)) {
        expect(typeof v).toBe('string');
        skins += 1;
      }
      expect(checkRecord(User, u)).toEqual([]);
    }
    expect(tours).toBeGreaterThan(0);
    expect(skins).toBeGreaterThan(0);
  });

  it('Avro carries the JSON string under the old name and the typed map beside it', () => {
    const value = toAvroValue(User, user);
    expect(value['finishedTours']).toBe('{"welcome":true,"market":false}');
    expect(value['finishedToursMap']).toEqual({ welcome: true, market: false });
    expect(value['equippedSkinKeysMap']).toEqual({ weapon: 'weapon-skin-gold' });
    const type = avro.Type.forSchema(generateAvroSchema(User) as avro.Schema, { ...AVRO_TYPE_OPTIONS });
    const decoded = fromAvroValue(User, type.fromBuffer(type.toBuffer(value)) as Obj);
    expect(decoded['finishedTours']).toEqual({ welcome: true, market: false });
    expect(decoded['equippedSkinKeys']).toEqual({ weapon: 'weapon-skin-gold' });
    expect(Object.keys(decoded)).not.toContain('finishedToursMap');
  });

  it('is a backward change: no break found, and a record written before reads with the new schema', () => {
    const before = schemaBeforeTypedMaps();
    const after = generateAvroSchema(User);
    expect(diffSchemas(before, after)).toEqual([]);
    // the naive change (the string field retyped to a map) is a break
    const retyped: AvroRecordSchema = {
      ...before,
      fields: before.fields.map((f) =>
        f.name === 'finishedTours'
          ? { ...f, type: ['null', { type: 'map', values: ['null', 'boolean'] }] }
          : f,
      ),
    };
    expect(diffSchemas(before, retyped).map((c) => c.kind)).toEqual(['retyped']);

    const writer = avro.Type.forSchema(before as avro.Schema, { ...AVRO_TYPE_OPTIONS });
    const reader = avro.Type.forSchema(after as avro.Schema, { ...AVRO_TYPE_OPTIONS });
    const oldValue = toAvroValue(User, user);
    delete oldValue['finishedToursMap'];
    delete oldValue['equippedSkinKeysMap'];
    const read = reader.fromBuffer(writer.toBuffer(oldValue), reader.createResolver(writer)) as Obj;
    expect(read['finishedToursMap']).toBeNull();
    const decoded = fromAvroValue(User, read);
    expect(decoded['finishedTours']).toEqual({ welcome: true, market: false });
    expect(decoded['equippedSkinKeys']).toEqual({ weapon: 'weapon-skin-gold' });
  });
});
