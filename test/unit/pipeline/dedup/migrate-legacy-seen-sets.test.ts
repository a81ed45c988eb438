import { describe, expect, it } from 'vitest';
import { parseLegacyMember } from '../../../../src/pipeline/dedup/migrate-legacy-seen-sets.js';

describe('parseLegacyMember (old-layout `_id` / `_id@version` strings)', () => {
  it('immutable resources: the member is the _id, whatever it holds', () => {
    expect(parseLegacyMember('a@2026-01-01T00:00:00.000Z', false)).toEqual({
      id: 'a@2026-01-01T00:00:00.000Z',
      version: '',
    });
  });

  it('changing resources: splits at the last @ when a version follows', () => {
    expect(parseLegacyMember('698c8fd256f71dd42526bfe2@2026-01-01T00:00:00.000Z', true)).toEqual({
      id: '698c8fd256f71dd42526bfe2',
      version: '2026-01-01T00:00:00.000Z',
    });
    expect(parseLegacyMember('odd@user@2026-01-01T00:00:00.000Z', true)).toEqual({
      id: 'odd@user',
      version: '2026-01-01T00:00:00.000Z',
    });
    expect(parseLegacyMember('e1@7', true)).toEqual({ id: 'e1', version: '7' });
    expect(parseLegacyMember('e1@2026-01-01T00:00:00Z', true)).toEqual({
      id: 'e1',
      version: '2026-01-01T00:00:00Z',
    });
  });

  it('changing resources: a member without a version after its last @ is a whole _id (a record without version)', () => {
    expect(parseLegacyMember('698c8fd256f71dd42526bfe2', true)).toEqual({
      id: '698c8fd256f71dd42526bfe2',
      version: '',
    });
    expect(parseLegacyMember('mail@example', true)).toEqual({ id: 'mail@example', version: '' });
    expect(parseLegacyMember('@5', true)).toEqual({ id: '@5', version: '' });
  });
});
