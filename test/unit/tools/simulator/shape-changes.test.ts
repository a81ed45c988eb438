import { describe, expect, it } from 'vitest';
import { createWorld } from '../../../../tools/simulator/world.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

describe('simulator shape changes', () => {
  it('adds a field and retypes another on records sorted at or after `from`, the same on every read', () => {
    const plain = createWorld({ scale: 'small', seed: 1 }).truth('donations');
    const times = plain.map((r) => Date.parse(r['createdAt'] as string)).sort((a, b) => a - b);
    const from = new Date(times[Math.floor(times.length / 2)] as number).toISOString();
    const world = createWorld({
      scale: 'small',
      seed: 1,
      shapeChanges: { donations: [{ from, addField: 'referrerId', retypeField: 'amount' }] },
    });
    const changed = world.truth('donations');
    expect(changed).toHaveLength(plain.length);
    for (const r of changed) {
      const after = Date.parse(r['createdAt'] as string) >= Date.parse(from);
      expect('referrerId' in r).toBe(after);
      if (r['amount'] !== null && r['amount'] !== undefined)
        expect(typeof r['amount']).toBe(after ? 'string' : 'number');
    }
    expect(world.truth('donations')).toEqual(changed);
    // other resources untouched
    expect(world.truth('parties')).toEqual(createWorld({ scale: 'small', seed: 1 }).truth('parties'));
  });

  it('refuses an unknown resource or a bad date with a ConfigError naming the option', () => {
    expect(() => createWorld({ shapeChanges: { nope: [] } as never })).toThrow(ConfigError);
    expect(() => createWorld({ shapeChanges: { donations: [{ from: 'soon', addField: 'x' }] } })).toThrow(
      /shapeChanges\.donations\[\]\.from must be an ISO date-time/,
    );
  });
});
