import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/schedules/parse-duration.js';

describe('parseDuration', () => {
  it('reads units and plain ms', () => {
    expect(parseDuration('--every', '30s')).toBe(30_000);
    expect(parseDuration('--every', '2m')).toBe(120_000);
    expect(parseDuration('--every', '1.5h')).toBe(5_400_000);
    expect(parseDuration('--every', '250ms')).toBe(250);
    expect(parseDuration('--every', '1d')).toBe(86_400_000);
    expect(parseDuration('--every', '1200')).toBe(1200);
    expect(parseDuration('--every', 42)).toBe(42);
  });
  it('names the option and the value it refuses', () => {
    expect(() => parseDuration('--lookback', 'soon')).toThrow(/--lookback .*"soon"/);
    expect(() => parseDuration('--every', -5)).toThrow(/--every/);
  });
  it('formats back', () => {
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(3_723_000)).toBe('1h2m3s');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(0)).toBe('0ms');
  });
});
