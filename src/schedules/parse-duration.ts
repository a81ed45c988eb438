/** Durations on the command line and in options: `500ms`, `30s`, `2m`, `1h`, `1d`, or a number of ms. */
import { ConfigError } from '../errors.js';

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration into ms.
 * @param option the option's name, for the error message (e.g. `--every`).
 * @throws ConfigError naming the option and the value when it is not a duration.
 */
export function parseDuration(option: string, value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0)
      throw new ConfigError(`${option} must be a duration >= 0, got ${String(value)}`);
    return Math.round(value);
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (m === null)
    throw new ConfigError(
      `${option} must be a duration like 500ms, 30s, 2m, 1h or 1d, got ${JSON.stringify(value)}`,
    );
  const unit = UNITS[m[2] ?? 'ms'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** Formats ms as a short duration (`1h2m`, `30s`, `250ms`) for status lines. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let s = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  if (s > 0 || parts.length === 0) parts.push(`${s}s`);
  return parts.join('');
}
