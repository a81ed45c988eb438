/**
 * The one range type of the project, and the checks every slicing function shares.
 */
import { ConfigError } from '../errors/index.js';

/**
 * A half-open time range `[start, end)` in epoch milliseconds of a listing's sort time.
 * Open ends exist only where the client reads: `end: Infinity` reads from the head of the feed (no cursor),
 * `start: -Infinity` reads to the feed's end. Planning functions take finite integer ranges.
 */
export interface TimeRange {
  start: number;
  end: number;
}

/** A finite range of integer ms with `start < end`. @throws ConfigError naming `name` and the range received. */
export function checkRange(range: TimeRange, name = 'range'): void {
  if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start >= range.end) {
    throw new ConfigError(`${name} must be integer ms with start < end, got [${range.start}, ${range.end})`);
  }
}

/** A range that may be open-ended (`-Infinity` / `Infinity`) but not empty or NaN. @throws ConfigError */
export function checkOpenRange(range: TimeRange, name = 'slice range'): void {
  if (Number.isNaN(range.start) || Number.isNaN(range.end) || !(range.start < range.end))
    throw new ConfigError(`${name} must have start < end, got [${range.start}, ${range.end})`);
}

/** @throws ConfigError naming the option when `value` is not a positive safe integer. */
export function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`option ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
