import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, toDurationMs } from '../../../../src/foundation/config/duration.js';
import { loadConfig } from '../../../../src/foundation/config/load-config.js';

/** The ms of a formatted compound duration (`1h2m3s`). */
function sumOf(text: string): number {
  return [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)].reduce(
    (sum, m) => sum + parseDuration('x', `${m[1]}${m[2]}`),
    0,
  );
}

describe('parseDuration', () => {
  it('reads units and plain ms', () => {
    expect(parseDuration('--every', '30s')).toBe(30_000);
    expect(parseDuration('--every', '2m')).toBe(120_000);
    expect(parseDuration('--every', '1.5h')).toBe(5_400_000);
    expect(parseDuration('--every', '250ms')).toBe(250);
    expect(parseDuration('--every', '1d')).toBe(86_400_000);
    expect(parseDuration('--every', ' 2 d ')).toBe(172_800_000);
    expect(parseDuration('--every', '1200')).toBe(1200);
    expect(parseDuration('--every', 42)).toBe(42);
  });
  it('names the option and the value it refuses', () => {
    expect(() => parseDuration('--lookback', 'soon')).toThrow(/--lookback .*"soon"/);
    expect(() => parseDuration('--every', -5)).toThrow(/--every/);
    expect(() => parseDuration('--every', '1w')).toThrow(/--every .*"1w"/);
  });
  it('is undefined, not NaN, for what is not a duration', () => {
    expect(toDurationMs('')).toBeUndefined();
    expect(toDurationMs('-1s')).toBeUndefined();
    expect(toDurationMs(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(toDurationMs('1e400')).toBeUndefined();
  });
  it('formats back in the same units, exactly', () => {
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(3_723_000)).toBe('1h2m3s');
    expect(formatDuration(86_400_000 + 7_200_000)).toBe('1d2h');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(1500)).toBe('1500ms');
    expect(formatDuration(0)).toBe('0ms');
    expect(formatDuration(Number.NaN)).toBe('-');
    for (const text of ['90s', '5m', '36h', '7d', '1500ms', '2.5h']) {
      const ms = parseDuration('x', text);
      expect(sumOf(formatDuration(ms))).toBe(ms);
    }
  });
});

describe('one syntax everywhere', () => {
  it('takes 1d in the environment, as on the command line', () => {
    const config = loadConfig({
      env: { GAMEDATA_GIVE_UP_AFTER: '1d', GAMEDATA_DRAIN_TIMEOUT: '2m', GAMEDATA_RETENTION_AGE: '1d' },
    });
    expect([config.giveUpAfterMs, config.drainTimeoutMs, config.retentionAgeMs]).toEqual([
      86_400_000, 120_000, 86_400_000,
    ]);
  });
});
