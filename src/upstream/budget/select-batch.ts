/**
 * Pure batch selection (the Redis take script does the same on the queues): up to `max` calls, highest priority
 * first, first come first served within a priority; identical calls share one slot of the POST.
 */

/** Takes up to `max` items from `queues` (index 0 = highest priority), FIFO within each queue. */
export function selectBatch<T>(queues: readonly (readonly T[])[], max: number): T[] {
  const out: T[] = [];
  for (const queue of queues) {
    for (const item of queue) {
      if (out.length >= max) return out;
      out.push(item);
    }
  }
  return out;
}

/** Collapses identical calls: `unique` holds each key once (first seen order); `slotOf[i]` is call i's slot. */
export function groupIdentical<T>(
  calls: readonly T[],
  keyOf: (call: T) => string,
): { unique: T[]; slotOf: number[] } {
  const index = new Map<string, number>();
  const unique: T[] = [];
  const slotOf = calls.map((call) => {
    const key = keyOf(call);
    let slot = index.get(key);
    if (slot === undefined) {
      slot = unique.length;
      index.set(key, slot);
      unique.push(call);
    }
    return slot;
  });
  return { unique, slotOf };
}
