/**
 * Which transactional.ids may hold records of a slice: the record that lets a new owner fence whatever an earlier
 * owner could still commit, now that a slice borrows a pooled producer instead of having a transactional.id of its
 * own (`producer-pool.ts`).
 *
 * Protocol (`transactional-slice-publisher.ts`): an owner `enter`s its id BEFORE the slice's first record goes into
 * any transaction of it, and gets the ids already there; it fences each of them (InitProducerId with that id: what
 * it left open is aborted, its producer can commit nothing more) and `leave`s them; it `leave`s its own id when the
 * slice's session closed with nothing open. Two owners entering at once: the one whose `enter` comes second sees the
 * first and fences it (enter is one atomic add-and-list), so two owners never both publish.
 *
 * The Redis implementation is `jobs/redis-slice-owners.ts` (shared by every process of a deployment); the in-memory
 * one here serves tests and single-process use (one map per process: publishers of one process see each other).
 */
export interface SliceOwners {
  /** Adds `transactionalId` to the slice's owners; returns the OTHER owners recorded (atomic). */
  enter(sliceKey: string, transactionalId: string): Promise<string[]>;
  /** The slice's recorded owners. */
  list(sliceKey: string): Promise<string[]>;
  /** Removes ids from the slice's owners (the key goes when none is left). */
  leave(sliceKey: string, transactionalIds: readonly string[]): Promise<void>;
}

const processOwners = new Map<string, Set<string>>();

/** Owners kept in this process's memory (shared by every publisher of the process that uses it). */
export function createMemorySliceOwners(map: Map<string, Set<string>> = processOwners): SliceOwners {
  return {
    enter(sliceKey, id) {
      const set = map.get(sliceKey) ?? new Set<string>();
      map.set(sliceKey, set);
      const others = [...set].filter((x) => x !== id);
      set.add(id);
      return Promise.resolve(others);
    },
    list(sliceKey) {
      return Promise.resolve([...(map.get(sliceKey) ?? [])]);
    },
    leave(sliceKey, ids) {
      const set = map.get(sliceKey);
      if (set !== undefined) {
        for (const id of ids) set.delete(id);
        if (set.size === 0) map.delete(sliceKey);
      }
      return Promise.resolve();
    },
  };
}
