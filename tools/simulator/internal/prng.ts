/**
 * Small, fast, seeded randomness. The world must be byte-for-byte reproducible from its seed, so nothing in the
 * simulator may use `Math.random`. Two tools: `hash32` derives a stable 32-bit value from a tuple of integers (so a
 * record can be regenerated from its identity alone, in any order), and `createRng` is a sequential stream
 * (mulberry32) for filling one record.
 */

/** Finaliser of murmur3-like quality: good avalanche for cheap. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A stable 32-bit hash of a tuple of integers (each taken modulo 2^32). */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Fold doubles above 2^32 too (timestamps in ms), so the whole value counts.
    const lo = part >>> 0;
    const hi = Math.floor(part / 4294967296) >>> 0;
    h = mix32(h ^ lo);
    h = mix32((h + hi + 0x6d2b79f5) >>> 0);
  }
  return h;
}

/** A stable 32-bit hash of a string (FNV-1a, then mixed). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** A uniform float in [0, 1) from a 32-bit hash. */
export function unit(h: number): number {
  return (h >>> 0) / 4294967296;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Uniform integer in [min, max] (both inclusive). */
  between(min: number, max: number): number;
  /** Uniform float in [min, max). */
  float(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A 32-bit unsigned integer. */
  u32(): number;
  /** Restarts the stream at a new seed (one generator reused across millions of rows, no allocation). */
  reseed(seed: number): void;
}

/**
 * mulberry32: a tiny generator with a 32-bit state, plenty for synthetic data. A class (methods on the
 * prototype) so that making or reseeding one costs nothing: records are regenerated millions of times.
 */
class Mulberry32 implements Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  u32(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  next(): number {
    return this.u32() / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  reseed(seed: number): void {
    this.#state = seed >>> 0;
  }
}

export function createRng(seed: number): Rng {
  return new Mulberry32(seed);
}
