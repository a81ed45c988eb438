/** The line that says how a run claims its records under exactly-once (`dedup/lone-runs.ts`). */
import { createLogger, type Logger } from '../../foundation/config/index.js';
import type { RunRegistration } from '../dedup/index.js';

/** Says how the run claims its records under exactly-once, per resource it was registered on. */
export function logRegistration(
  registered: readonly RunRegistration[] | undefined,
  runId: string,
  log: Pick<Logger, 'info'> = createLogger('jobs.backfill'),
): void {
  for (const r of registered ?? [])
    log.info(
      { runId, resource: r.resource, claims: r.lone ? 'by mark' : 'locks', overlapping: r.overlapping },
      r.lone
        ? `run ${runId} is alone on ${r.resource}'s range: its pages claim by mark (no lock)`
        : `run ${runId} overlaps ${r.overlapping.length === 0 ? 'a run' : r.overlapping.join(', ')} on ${r.resource}: its pages take locks`,
    );
}
