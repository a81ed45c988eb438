/** Pure freshness rules of the SWR cache. */
import type { CacheEntry } from './cache-store.js';

/** Freshness windows of one operation. */
export interface CacheWindows {
  /** How long a value is served without a fetch, ms. */
  freshMs: number;
  /** How long after that a stale value is still served while it revalidates, ms. */
  staleMs: number;
}

export type Freshness = 'fresh' | 'stale' | 'expired';

/** Where an entry stands at `now`. */
export function freshnessOf(entry: CacheEntry | undefined, now: number): Freshness {
  if (!entry || now >= entry.expiresAt) return 'expired';
  return now < entry.staleAt ? 'fresh' : 'stale';
}

/** A new entry for a value fetched at `fetchedAt`. */
export function makeEntry<T>(value: T, fetchedAt: number, windows: CacheWindows): CacheEntry<T> {
  return {
    value,
    fetchedAt,
    staleAt: fetchedAt + windows.freshMs,
    expiresAt: fetchedAt + windows.freshMs + windows.staleMs,
  };
}

/** Whether `incoming` may replace `current` (never an older fetch over a newer one). */
export function mayReplace(current: CacheEntry | undefined, incoming: CacheEntry): boolean {
  return current === undefined || incoming.fetchedAt >= current.fetchedAt;
}
