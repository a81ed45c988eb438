/** Plans a backfill and enqueues it as one flow (the `backfill` command and the demo call this). */
import type { ConnectionOptions } from 'bullmq';
import {
  planBackfill,
  type BackfillRequest,
  type PlanBackfillOptions,
  type PlannerSource,
  type PlannedRun,
} from '../planner/plan-backfill.js';
import { enqueueRun } from './backfill-flow.js';
import type { RunCounters } from './run-counters.js';

export interface StartBackfillOptions {
  connection: ConnectionOptions;
  /** BullMQ prefix. */
  prefix: string;
  planner: PlannerSource;
  counters: Pick<RunCounters, 'setState'>;
  plan?: PlanBackfillOptions;
}

/** Plans the run, records it as `running`, and enqueues run + slices. Returns the plan. */
export async function startBackfill(request: BackfillRequest, o: StartBackfillOptions): Promise<PlannedRun> {
  const planned = await planBackfill(request, o.planner, o.plan);
  await o.counters.setState(planned.run.runId, 'running', {
    slices: planned.slices.length,
    resources: planned.run.resources.join(','),
  });
  await enqueueRun(planned.run, planned.slices, { connection: o.connection, prefix: o.prefix });
  return planned;
}
