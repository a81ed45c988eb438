/**
 * Pure core of the proof behind "a full history that reads each transaction once" (issue 23; the plan is in
 * docs/ARCHITECTURE.md, "Upstream budget"; wired by `prove-partition.ts`, which `plan-partitioned.ts` runs for
 * `planBackfill`'s `partition` option). Inside the 72 h window the unfiltered feed is complete, so walks partitioned
 * by one full-history filter (one walk per `countryId`, per `itemCode`, ...) can be checked against it: a feed row is
 * covered when exactly one walk returned it, repeated when several did (the filter is not a partition), uncovered
 * when none did. A transaction type is proven only when every feed row of it is covered; the others are walked per
 * user, filtered to them.
 */

/** One row as the proof needs it. */
export interface ProofRow {
  id: string;
  /** `transactionType`. */
  type: string;
}

/** Counts of one type (or of all rows). */
export interface CoverageCounts {
  /** Feed rows. */
  rows: number;
  /** Feed rows returned by exactly one walk. */
  covered: number;
  /** Feed rows returned by no walk. */
  uncovered: number;
  /** Feed rows returned by two walks or more. */
  repeated: number;
}

export interface CoverageProof extends CoverageCounts {
  /** Walk rows the feed lacks (the walks read another range than the feed: the proof does not hold). */
  foreign: number;
  byType: Record<string, CoverageCounts>;
  /** Types with feed rows, every one of them covered, and no foreign row: walk them by the partition. Sorted. */
  provenTypes: string[];
  /**
   * Every other type: seen with an uncovered, repeated or foreign row, or known (`knownTypes`) but absent from the
   * window (nothing proves it). Walk them per user. Sorted.
   */
  unprovenTypes: string[];
  /** No row uncovered, repeated or foreign, and every known type proven. */
  complete: boolean;
}

/**
 * Checks partition walks against the feed over the same range.
 * @param feed Every row of the unfiltered feed in the range.
 * @param walks Each partition walk's rows in the same range.
 * @param knownTypes Types the upstream may have beyond those in the range (they cannot be proven here).
 * @example
 * proveCoverage([{ id: 'a', type: 'wage' }], [[{ id: 'a', type: 'wage' }]]).provenTypes; // ['wage']
 */
export function proveCoverage(
  feed: Iterable<ProofRow>,
  walks: Iterable<Iterable<ProofRow>>,
  knownTypes: Iterable<string> = [],
): CoverageProof {
  const typeOf = new Map<string, string>();
  for (const row of feed) typeOf.set(row.id, row.type);
  const times = new Map<string, number>();
  const foreignTypes = new Set<string>();
  let foreign = 0;
  for (const walk of walks) {
    // A walk that returns a row twice (a page boundary re-read) still covers it once: count walks, not reads.
    const seenHere = new Set<string>();
    for (const row of walk) {
      if (seenHere.has(row.id)) continue;
      seenHere.add(row.id);
      if (!typeOf.has(row.id)) {
        foreign++;
        foreignTypes.add(row.type);
        continue;
      }
      times.set(row.id, (times.get(row.id) ?? 0) + 1);
    }
  }
  const empty = (): CoverageCounts => ({ rows: 0, covered: 0, uncovered: 0, repeated: 0 });
  const total = empty();
  const byType: Record<string, CoverageCounts> = {};
  for (const [id, type] of typeOf) {
    const c = (byType[type] ??= empty());
    const n = times.get(id) ?? 0;
    const outcome = n === 0 ? 'uncovered' : n === 1 ? 'covered' : 'repeated';
    c.rows++;
    c[outcome]++;
    total.rows++;
    total[outcome]++;
  }
  const proven = Object.entries(byType)
    .filter(([type, c]) => c.covered === c.rows && !foreignTypes.has(type) && foreign === 0)
    .map(([type]) => type);
  const provenSet = new Set(proven);
  const all = new Set([...Object.keys(byType), ...foreignTypes, ...knownTypes]);
  const unproven = [...all].filter((t) => !provenSet.has(t));
  return {
    ...total,
    foreign,
    byType,
    provenTypes: proven.sort(),
    unprovenTypes: unproven.sort(),
    complete: total.uncovered === 0 && total.repeated === 0 && foreign === 0 && unproven.length === 0,
  };
}
