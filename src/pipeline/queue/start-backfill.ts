/** Plans a backfill and enqueues it as one flow (the `backfill` command and the demo call this). */
import type { ConnectionOptions } from 'bullmq';
import {
  planBackfill,
  type BackfillRequest,
  type PlanBackfillOptions,
  type PlannerSource,
  type PlannedRun,
} from '../planner/plan-backfill.js';
import { createLogger, type Logger, maskWith, ownSecrets } from '../../foundation/config/index.js';
import { enqueueRun } from './backfill-flow.js';
import { estimatePlanCost } from '../planner/plan-cost.js';
import { keyTimeField } from '../planner/run-key-time.js';
import type { RunCounters } from './run-counters.js';
import type { UserDirectory } from '../slice/user-discovery.js';
import { runWithPriority, type CallPriority } from '../../upstream/budget/index.js';
import { GamedataError } from '../../foundation/errors/index.js';
import { createEarlySliceSink } from './early-slices.js';
import { logRegistration } from './log-registration.js';
import type { RunRegistry } from '../dedup/index.js';

export interface StartBackfillOptions {
  connection: ConnectionOptions;
  /** BullMQ prefix. */
  prefix: string;
  planner: PlannerSource;
  /** Records the run; its `retention`, when it has one, also bounds the run's finished BullMQ jobs. */
  counters: Pick<RunCounters, 'setState'> & Partial<Pick<RunCounters, 'retention'>>;
  plan?: PlanBackfillOptions;
  /**
   * The run's user set, seeded with the listed users before the run is enqueued (full-history transactions), so
   * slices spawn walks only for users the listings did not show. Without it discovery still works (a listed user's
   * discovered walk has its planned slice's id, and re-adding it is a no-op), at the cost of those no-op adds.
   */
  users?: Pick<UserDirectory, 'seed' | 'add' | 'unknown'>;
  /** Where the unlisted-users warning and the partition proof's line go. @default createLogger('jobs.backfill') */
  log?: Pick<Logger, 'warn' | 'info'>;
  /** Priority of the run's upstream calls on the shared budget (stamped on the run and its slices). @default 'backfill' */
  priority?: CallPriority;
  /**
   * A tail's run (issue 48): a slice that fails for good leaves a gap instead of failing the run
   * (`RunJobData.gapOnFailure`, stamped on the run and its slices). @default false
   */
  gapOnFailure?: boolean;
  /**
   * The runs of each resource (`dedup/lone-runs.ts`): the run is registered before any of its slices is enqueued, so
   * a run alone on its range claims by mark. Without it the run's slices take locks (exact, slower).
   */
  runs?: Pick<RunRegistry, 'register'> | undefined;
}

/** The run's fields in the run counters: its slices, resources, listing, partition and what it costs the key. */
function runState(planned: PlannedRun): Record<string, string | number> {
  const partition = planned.run.partition;
  return {
    slices: planned.slices.length,
    resources: planned.run.resources.join(','),
    ...(planned.users === undefined ? {} : { unlistedUsers: planned.users.unlisted }),
    // What the partition proof found, for `status` and the workers' gamedata_partition_* gauges.
    ...(partition === undefined ? {} : { partition: JSON.stringify(partition) }),
    // What the plan costs the key (issue 32), for `status`: the dry run's estimate, kept.
    ...keyTimeField(estimatePlanCost(planned)),
  };
}

/** Says what planning found that an operator should know: users the listing hides, the partition proof's result. */
function logPlan(planned: PlannedRun, log: Pick<Logger, 'warn' | 'info'>): void {
  const unlisted = planned.users?.unlisted ?? 0;
  if (unlisted > 0) {
    log.warn(
      { runId: planned.run.runId, unlistedUsers: unlisted, listedUsers: planned.users?.ids.length ?? 0 },
      `${unlisted} user listing item(s) had no _id: those users are walked only if a trade with a walked user reveals them (discovery)`,
    );
  }
  const partition = planned.run.partition;
  if (partition !== undefined) {
    log.info(
      {
        runId: planned.run.runId,
        key: partition.key,
        provenTypes: partition.provenTypes,
        unprovenTypes: partition.unprovenTypes,
        rows: partition.rows,
        proofPages: partition.pages,
      },
      partition.provenTypes.length === 0
        ? `partition proof by ${partition.key}: no type proven, every type walked per user`
        : `partition proof by ${partition.key}: ${partition.provenTypes.join(', ')} walked per ${partition.key}; ` +
            `${partition.unprovenTypes.length === 0 ? 'nothing' : partition.unprovenTypes.join(', ')} per user`,
    );
  }
}

/**
 * Plans the run, records it as `running`, and enqueues run + slices. Returns the plan. The per-user walks of a full
 * history are enqueued as planning finds their users (`early-slices.ts`): the run is open before planning ends.
 */
export async function startBackfill(request: BackfillRequest, o: StartBackfillOptions): Promise<PlannedRun> {
  const priority = o.priority ?? 'backfill';
  const enqueue = {
    connection: o.connection,
    prefix: o.prefix,
    ...(o.counters.retention === undefined ? {} : { retention: o.counters.retention }),
  };
  const early = createEarlySliceSink({
    ...enqueue,
    counters: o.counters,
    ...(o.users === undefined ? {} : { users: o.users }),
    priority,
    gapOnFailure: o.gapOnFailure === true,
    runs: o.runs,
  });
  const gap = o.gapOnFailure === true ? { gapOnFailure: true } : {};
  let planned: PlannedRun;
  try {
    const plannedRaw = await runWithPriority(priority, () =>
      planBackfill(request, o.planner, o.plan, early.tell),
    );
    planned = {
      ...plannedRaw,
      run: { ...plannedRaw.run, priority, ...gap },
      slices: plannedRaw.slices.map((s) => ({ ...s, priority, ...gap })),
    };
    logPlan(planned, o.log ?? createLogger('jobs.backfill'));
    if (await early.finish(planned, runState(planned))) return planned;
  } catch (error) {
    // Stored in Redis with the hold: masked, as a slice's failure is.
    const reason = maskWith(GamedataError.from(error).message, ownSecrets());
    await early.fail(`its planner failed: ${reason}`).catch(() => undefined);
    throw error;
  }
  if (planned.users !== undefined)
    await o.users?.seed(planned.run.runId, planned.users.ids, planned.users.unlisted);
  logRegistration(await o.runs?.register(planned.run), planned.run.runId, o.log);
  await o.counters.setState(planned.run.runId, 'running', runState(planned));
  await enqueueRun(planned.run, planned.slices, enqueue);
  return planned;
}
