/** The line that says how a run claims its records under exactly-once (`dedup/lone-runs.ts`). */
import { createLogger, type Logger } from '../../foundation/config/index.js';
import type { RunRegistration } from '../dedup/index.js';

/**
 * Says how the run claims its records under exactly-once, per resource it was registered on: at debug when it is alone
 * (claims by mark, the usual case: every tail run says it), at info when it overlaps other runs and takes locks.
 */
export function logRegistration(
  registered: readonly RunRegistration[] | undefined,
  runId: string,
  log: Pick<Logger, 'info'> & Partial<Pick<Logger, 'debug'>> = createLogger('jobs.backfill'),
): void {
  for (const r of registered ?? []) {
    const fields = {
      runId,
      resource: r.resource,
      claims: r.lone ? 'by mark' : 'locks',
      overlapping: r.overlapping,
    };
    if (r.lone)
      log.debug?.(fields, `run ${runId} is alone on ${r.resource}'s range: its pages claim by mark`);
    else
      log.info(
        fields,
        `run ${runId} overlaps ${r.overlapping.length === 0 ? 'a run' : r.overlapping.join(', ')} on ${r.resource}: ` +
          'its pages take locks, once the pages those runs claimed by mark have settled',
      );
  }
}
