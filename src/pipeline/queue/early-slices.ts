/**
 * The run's slices enqueued as planning finds them (issue 32): the first ones open the run with its planning hold
 * (`planning-hold.ts`), later ones are added under it, and once planning ends the rest of the plan is added and the
 * hold released. A small full history's walks thereby start ~2 s before its user listing ends, at the real service's
 * latency.
 *
 * The run's user set (`user-discovery.ts`) is seeded with each batch's users before the batch is added, as with a
 * run enqueued whole, so a trade never spawns a second walk of a user whose walk is cut into pieces. A user whose
 * walk discovery already started (a trade revealed them before the listing page that shows them arrived) is not
 * planned again: its walk is the planned one (`userWalk`), started earlier.
 */
import type { RunRegistry } from '../dedup/index.js';
import { logRegistration } from './log-registration.js';
import type { EarlySlices, PlannedRun } from '../planner/plan-backfill.js';
import type { RunJobData, SliceJobData } from '../contract/job-types.js';
import type { CallPriority } from '../../upstream/budget/index.js';
import type { EnqueueRunOptions } from './backfill-flow.js';
import { enqueueOpenRun, type OpenRun } from './planning-hold.js';
import type { RunCounters } from './run-counters.js';
import type { UserDirectory } from '../slice/user-discovery.js';
import { GamedataError } from '../../foundation/errors/index.js';

export interface EarlySliceOptions extends EnqueueRunOptions {
  counters: Pick<RunCounters, 'setState'>;
  users?: Pick<UserDirectory, 'seed' | 'add' | 'unknown'>;
  priority: CallPriority;
  /** The run's `gapOnFailure` (a tail's), stamped on the run and every slice told. @default false */
  gapOnFailure?: boolean;
  /** Registers the run (`dedup/lone-runs.ts`) before its first slice is enqueued. */
  runs?: Pick<RunRegistry, 'register'> | undefined;
}

/** The planner's early slices, enqueued in the order told; then the rest of the plan, or the run failed. */
export interface EarlySliceSink {
  /** For `planBackfill`'s `early`. */
  tell: EarlySlices;
  /**
   * Planning ended: once the batches told are enqueued, adds the plan's slices not added yet, records the run's final
   * data and releases the hold. False when no batch opened the run (nothing told): the caller enqueues the plan whole.
   */
  finish(planned: PlannedRun, state: Record<string, string | number>): Promise<boolean>;
  /** Planning (or {@link finish}) failed: the run fails with `reason` (a no-op when it was never enqueued). */
  fail(reason: string): Promise<void>;
}

/** The user of a per-user walk's slice, or undefined. */
function userOf(slice: SliceJobData): string | undefined {
  const id = slice.filters['userId'];
  return typeof id === 'string' ? id : undefined;
}

/** The distinct users of `slices`' per-user walks. */
function usersOf(slices: readonly SliceJobData[]): string[] {
  return [...new Set(slices.map(userOf).filter((u): u is string => u !== undefined))];
}

/** `slices` less those of users the run's set knows (walked already: listed in an earlier batch, or discovered). */
async function ofUnknownUsers(
  o: EarlySliceOptions,
  runId: string,
  slices: readonly SliceJobData[],
): Promise<SliceJobData[]> {
  const users = usersOf(slices);
  if (o.users === undefined || users.length === 0) return [...slices];
  const unknown = new Set(await o.users.unknown(runId, users));
  return slices.filter((s) => {
    const user = userOf(s);
    return user === undefined || unknown.has(user);
  });
}

/** See {@link EarlySliceSink}. */
export function createEarlySliceSink(o: EarlySliceOptions): EarlySliceSink {
  const added = new Set<string>();
  let open: OpenRun | undefined;
  let chain: Promise<void> = Promise.resolve();
  let failure: GamedataError | undefined;
  const gap = o.gapOnFailure === true ? { gapOnFailure: true } : {};
  const stamp = (slices: readonly SliceJobData[]): SliceJobData[] =>
    slices.map((s) => ({ ...s, priority: o.priority, ...gap }));

  /** Seeds the batch's users, then enqueues it: the run with its hold the first time, under the run after. */
  async function addBatch(run: RunJobData, slices: readonly SliceJobData[]): Promise<void> {
    const fresh = await ofUnknownUsers(
      o,
      run.runId,
      slices.filter((s) => !added.has(s.sliceId)),
    );
    if (fresh.length === 0) return;
    const users = usersOf(fresh);
    if (users.length > 0) await o.users?.add(run.runId, users);
    for (const s of fresh) added.add(s.sliceId);
    if (open !== undefined) return open.add(fresh);
    logRegistration(await o.runs?.register(run), run.runId);
    await o.counters.setState(run.runId, 'running', {
      slices: fresh.length,
      resources: run.resources.join(','),
    });
    open = await enqueueOpenRun({ ...run, priority: o.priority, ...gap }, fresh, o);
  }

  return {
    tell(run, slices) {
      const batch = stamp(slices);
      chain = chain
        .then(() => (failure === undefined ? addBatch(run, batch) : undefined))
        .catch((e: unknown) => {
          failure ??= GamedataError.from(e);
        });
    },
    async finish(planned, state) {
      await chain;
      if (failure !== undefined) throw failure;
      if (open === undefined) return false;
      const { runId } = planned.run;
      const rest = await ofUnknownUsers(
        o,
        runId,
        planned.slices.filter((s) => !added.has(s.sliceId)),
      );
      if (planned.users !== undefined) await o.users?.seed(runId, planned.users.ids, planned.users.unlisted);
      await open.add(rest);
      await open.updateRun(planned.run);
      await o.counters.setState(runId, 'running', state);
      await open.release();
      await open.close();
      return true;
    },
    async fail(reason) {
      await chain;
      if (open === undefined) return;
      try {
        await open.fail(reason);
      } finally {
        await open.close();
      }
    },
  };
}
