/**
 * Queue names, job names and job ids of the pipeline, in one place. Job ids are deterministic (so re-adding a
 * slice after a crash is a no-op) and never contain `:` (BullMQ's key separator).
 */

/** BullMQ queue names. */
export const QUEUE_NAMES = {
  /** Parent jobs: one per run; processed once every slice of the run completed. */
  runs: 'gamedata-runs',
  /** Child jobs: one per slice. */
  slices: 'gamedata-slices',
} as const;

/** BullMQ job names. */
export const JOB_NAMES = {
  run: 'run',
  slice: 'slice',
  /** A run's planning hold: keeps the run open while its planner still adds slices (src/pipeline/queue/planning-hold.ts). */
  hold: 'planning-hold',
} as const;

/** Default BullMQ key prefix. */
export const DEFAULT_QUEUE_PREFIX = 'gamedata-bull';

/** Makes a string safe inside a job id: no `:` and nothing but `[A-Za-z0-9._-]`. */
export function safeIdPart(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The run id: `<resource>-<tag>-<startedAt ms>`, deterministic given its inputs. */
export function runJobId(resource: string, tag: string, createdAtMs: number): string {
  return safeIdPart(`${resource}-${tag}-${createdAtMs}`);
}

/** The id of a slice job: run, filter scope and range make it unique within the run (a list of values: `a+b`). */
export function sliceJobId(
  runId: string,
  filters: Readonly<Record<string, string | readonly string[]>>,
  start: number,
  end: number,
): string {
  const scope = Object.keys(filters)
    .sort()
    .map((k) => {
      const v = filters[k] ?? '';
      return `${k}=${typeof v === 'string' ? v : v.join('+')}`;
    })
    .join(',');
  return safeIdPart(`${runId}.${scope === '' ? 'all' : scope}.${start}-${end}`);
}
