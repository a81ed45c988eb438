/**
 * What the partition proof of a full-history transactions run found (issue 23), as `status` and the workers'
 * `gamedata_partition_*` gauges read it: `startBackfill` keeps the run's `PartitionSummary` as JSON in the run's
 * state hash (field `partition`).
 */
import type { Redis } from 'ioredis';
import type { PartitionSummary } from '../../pipeline/contract/index.js';
import type { PipelineMetrics } from '../../foundation/metrics/index.js';

/** The summary a run's state holds, or undefined (no proof, or a field this version cannot read). */
export function parsePartition(state: Record<string, string>): PartitionSummary | undefined {
  const raw = state['partition'];
  if (raw === undefined) return undefined;
  try {
    const p = JSON.parse(raw) as Partial<PartitionSummary>;
    return Array.isArray(p.provenTypes) && Array.isArray(p.unprovenTypes) && typeof p.rows === 'object'
      ? (p as PartitionSummary)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The newest proof among the newest `runs` runs (tails and other runs carry none). */
export async function readLatestPartition(
  redis: Redis,
  redisPrefix: string,
  runs = 10,
): Promise<{ runId: string; partition: PartitionSummary } | undefined> {
  // Loaded here, not with this module: format-status.ts imports it, and `gamedata status --help` must not load the
  // whole queue folder (bullmq, the slice and the planner) through its door.
  const { createRunCounters } = await import('../../pipeline/queue/index.js');
  for (const { runId, state } of await createRunCounters(redis, redisPrefix).listRuns(runs)) {
    const partition = parsePartition(state);
    if (partition !== undefined) return { runId, partition };
  }
  return undefined;
}

/**
 * Sets `gamedata_partition_rows{outcome}` (covered, uncovered, repeated, foreign) and
 * `gamedata_partition_types{type, proven}` (1 per type) from a proof; the previous proof's series are cleared.
 */
export function setPartitionGauges(metrics: Pick<PipelineMetrics, 'partition'>, p: PartitionSummary): void {
  const g = metrics.partition;
  for (const outcome of ['covered', 'uncovered', 'repeated', 'foreign'] as const)
    g.rows.set({ outcome }, p.rows[outcome]);
  g.types.reset();
  for (const type of p.provenTypes) g.types.set({ type, proven: 'true' }, 1);
  for (const type of p.unprovenTypes) g.types.set({ type, proven: 'false' }, 1);
}

/** One line of `status` for a proof. */
export function formatPartition(p: PartitionSummary): string {
  const r = p.rows;
  return (
    `partition by ${p.key} (${p.walks} walks), proven on ${new Date(p.window.start).toISOString()}..${new Date(p.window.end).toISOString()}: ` +
    `${r.covered} covered, ${r.uncovered} uncovered, ${r.repeated} repeated, ${r.foreign} foreign rows; ` +
    `proven ${p.provenTypes.length === 0 ? 'none' : p.provenTypes.join(', ')}; ` +
    `per user ${p.unprovenTypes.length === 0 ? 'none' : p.unprovenTypes.join(', ')}; ${p.pages} proof pages` +
    (p.used === false ? '; not used: users hidden from the listings, every type walked per user' : '')
  );
}
