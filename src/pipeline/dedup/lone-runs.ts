/**
 * The runs of each resource, as claims by mark need them (`mark-claims.ts`): a run may mark only while no other run
 * overlaps its range on the resource. Each run is registered before any of its slices is enqueued, and retired when
 * it completes. A registration that overlaps others makes them share (their pages take locks from their next claim
 * on) and lists them, so the new run's first claim of locks waits until every page they marked has settled.
 *
 * Keys: `<prefix>:eos:runs:<resource>` (a hash, run id -> `<since>|<until>|<lone|shared>|<active|retired>`),
 * `<prefix>:eos:drain:<run>:<resource>` (a set of run ids), `<prefix>:eos:marking:<run>:<resource>` (a sorted set of
 * page keys by lease end). A run that is never retired (its process died at the end) only makes later overlapping
 * runs take locks, which is exact too; retired entries go once their marking sets are empty (the next registration or
 * the sweep).
 */
import { GamedataError } from '../../foundation/errors/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { onRedis } from './internal/on-redis.js';
import { markable, type MarkClaimsBackend } from './mark-claims.js';
import { pendingKeysOf } from './pending-page.js';

/** A run as the registry needs it. */
export interface RegisteredRun {
  runId: string;
  resources: readonly ResourceName[];
  /** The run's range, epoch ms, half-open; absent: unbounded on that side. */
  since?: number | undefined;
  until?: number | undefined;
  /** `--replay` runs claim against their own scoped set: they never mark, nor wait for marks. */
  replay?: boolean | undefined;
}

/** How a run was registered on one resource. */
export interface RunRegistration {
  resource: ResourceName;
  /** It claims by mark (no other run overlaps it); else it takes locks. */
  lone: boolean;
  /** The registered runs its range overlaps (they take locks from now on, and it waits for their marks). */
  overlapping: string[];
}

export interface RunRegistry {
  /**
   * Records the run on each of its resources whose records never change (before any of its slices is enqueued); says
   * how (none for a `--replay` or changing resources: they take locks).
   */
  register(run: RegisteredRun): Promise<RunRegistration[]>;
  /** The run completed: its entries share and go once their pages have settled. */
  retire(run: Pick<RegisteredRun, 'runId' | 'resources'>): Promise<void>;
}

const checkRunId = (runId: string): void => {
  if (runId === '' || /[\s|]/.test(runId))
    throw new GamedataError(`run id must be non-empty, without "|" or spaces, got ${JSON.stringify(runId)}`);
};

export interface RunRegistryOptions {
  /** Key prefix (the pending marks'). @default 'gamedata' */
  prefix?: string;
  /**
   * Whether a run is over for good (its run job completed or failed). A registration first retires the registered runs
   * it says are over: a backfill that failed never reaches `retire`, and would otherwise make every later run on its
   * range take locks. Only a run known to be over may be retired (one not enqueued yet is not). Absent: none is.
   */
  isOver?: (runId: string) => Promise<boolean>;
}

/** The registry on a backend (`createRedisPendingMarks(redis)` in production), under the pending marks' prefix. */
export function createRunRegistry(backend: MarkClaimsBackend, options: RunRegistryOptions = {}): RunRegistry {
  const prefix = options.prefix ?? 'gamedata';
  const keys = pendingKeysOf(prefix);
  const { isOver } = options;
  /** Retires the runs of `resource` other than `runId` that are over (their entries go once their marks settled). */
  const retireOver = async (resource: ResourceName, runId: string): Promise<void> => {
    if (isOver === undefined) return;
    const registry = keys.runs(resource);
    const entries = await onRedis(`reading the runs of ${resource}`, () => backend.registered(registry));
    for (const { run, retired } of entries)
      if (!retired && run !== runId && (await isOver(run)))
        await onRedis(`retiring run ${run} on ${resource}`, () =>
          backend.retire({ registry, marking: keys.marking(run, resource), run }),
        );
  };
  return {
    async register(run) {
      checkRunId(run.runId);
      if (run.replay === true) return [];
      const out: RunRegistration[] = [];
      for (const resource of run.resources.filter(markable)) {
        await retireOver(resource, run.runId);
        const answer = await onRedis(`registering run ${run.runId} on ${resource}`, () =>
          backend.register({
            registry: keys.runs(resource),
            drain: keys.drain(run.runId, resource),
            run: run.runId,
            since: run.since ?? 0,
            until: run.until ?? Number.MAX_SAFE_INTEGER,
            lone: true,
            markingHead: `${prefix}:eos:marking:`,
            markingTail: `:${resource}`,
          }),
        );
        out.push({ resource, lone: answer.lone, overlapping: answer.drain });
      }
      return out;
    },
    async retire(run) {
      for (const resource of run.resources.filter(markable)) {
        await onRedis(`retiring run ${run.runId} on ${resource}`, () =>
          backend.retire({
            registry: keys.runs(resource),
            marking: keys.marking(run.runId, resource),
            run: run.runId,
          }),
        );
      }
    },
  };
}
