/** Names of the schedules queue, its job names and scheduler ids (no `:`, BullMQ's key separator). */
import type { ResourceName } from '../../foundation/models/index.js';

/** The BullMQ queue whose jobs are schedule ticks (one tick = "plan and start the next run of a resource"). */
export const SCHEDULE_QUEUE = 'gamedata-schedules';

/** The kinds of schedule: an incremental tail, or a full backfill on a cron. */
export type ScheduleKind = 'tail' | 'backfill';

/** The job scheduler id of a resource's schedule of one kind: `tail-users`, `backfill-parties`. */
export function schedulerId(kind: ScheduleKind, resource: ResourceName): string {
  return `${kind}-${resource}`;
}
