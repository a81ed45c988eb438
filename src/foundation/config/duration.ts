/**
 * The one duration syntax of every setting, flag and status line: `250ms`, `30s`, `2m`, `1.5h`, `1d`, or a bare
 * number of milliseconds. The environment, the config file and the command line accept the same units, and status
 * lines print them back in the same units.
 */
import { ConfigError } from '../errors/index.js';

/** Milliseconds per unit. */
const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/;

/**
 * A duration in ms, or undefined when `value` is not one (negative, not finite, unknown unit, beyond a safe integer).
 * @example toDurationMs('1d') // 86_400_000
 * @example toDurationMs(1500) // 1500
 */
export function toDurationMs(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const match = DURATION_PATTERN.exec(value);
  if (match === null) return undefined;
  const ms = Math.round(Number(match[1]) * (DURATION_UNITS[match[2] ?? 'ms'] ?? 1));
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * Parses a duration into ms (see `toDurationMs`).
 * @param option the option's name, for the error message (e.g. `--every`).
 * @throws ConfigError naming the option and the value when it is not a duration.
 * @example parseDuration('--every', '30s') // 30_000
 */
export function parseDuration(option: string, value: string | number): number {
  const ms = toDurationMs(value);
  if (ms === undefined)
    throw new ConfigError(
      `${option} must be a duration like 500ms, 30s, 2m, 1h or 1d, got ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`,
    );
  return ms;
}

/**
 * Formats ms in the same units, largest first (`1d2h`, `1h2m3s`, `30s`, `250ms`); `-` when not finite.
 * Whole seconds above one second (sub-second remainders are rounded), so it is exact for every duration a setting
 * takes in `s`, `m`, `h` or `d`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms % 1000 !== 0 && ms < 60_000) return `${ms}ms`;
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
