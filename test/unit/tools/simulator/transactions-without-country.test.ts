/** The simulator option that leaves a share of one type's rows outside a per-country partition (issue 23). */
import { describe, expect, it } from 'vitest';
import { createWorld } from '../../../../tools/simulator/index.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

type Row = Record<string, unknown>;

describe('transactionsWithoutCountry', () => {
  const plain = createWorld({ seed: 3, scale: 'small' }).truth('transactions') as Row[];
  const gapped = createWorld({
    seed: 3,
    scale: 'small',
    transactionsWithoutCountry: { wage: 0.25 },
  }).truth('transactions') as Row[];

  it('drops countryId from about the share of that type only; every other field and row stays as it was', () => {
    expect(gapped).toHaveLength(plain.length);
    const wages = gapped.filter((r) => r['transactionType'] === 'wage');
    const without = wages.filter((r) => !('countryId' in r));
    expect(without.length / wages.length).toBeGreaterThan(0.18);
    expect(without.length / wages.length).toBeLessThan(0.32);
    expect(
      gapped.filter((r) => r['transactionType'] !== 'wage').every((r) => typeof r['countryId'] === 'string'),
    ).toBe(true);
    expect(plain.every((r) => typeof r['countryId'] === 'string')).toBe(true);
    gapped.forEach((r, i) => {
      const { countryId: _a, ...rest } = r;
      const { countryId: _b, ...restPlain } = plain[i] as Row;
      expect(rest).toEqual(restPlain);
    });
  });

  it('rejects an unknown type and a share outside [0, 1], naming the option', () => {
    expect(() => createWorld({ transactionsWithoutCountry: { nope: 0.1 } as never })).toThrow(ConfigError);
    expect(() => createWorld({ transactionsWithoutCountry: { wage: 1.5 } })).toThrow(
      /transactionsWithoutCountry\.wage must be a share between 0 and 1/,
    );
  });
});
