/**
 * The work of one slice in the deployment's delivery mode: exactly-once when `deps.eos` is set
 * (`process-slice-exactly-once.ts`), else at-least-once (`process-slice-at-least-once.ts`), for library users and
 * tests; the worker (`pipeline-worker.ts`) chooses the path itself. Both paths share one contract
 * (`slice-contract.ts`) and one walk (`slice-walk.ts`).
 */
import type { SliceResult } from '../contract/job-types.js';
import { processSliceAtLeastOnce } from './process-slice-at-least-once.js';
import { processSliceExactlyOnce } from './process-slice-exactly-once.js';
import { DEFAULT_PROCESS_SLICE_OPTIONS } from './slice-contract.js';
import type { ProcessSliceDeps, ProcessSliceOptions, SliceJobHandle } from './slice-contract.js';

/** Processes one slice to its end in the delivery mode its deps carry. */
export function processSlice(
  job: SliceJobHandle,
  deps: ProcessSliceDeps,
  options: ProcessSliceOptions = {},
): Promise<SliceResult> {
  if (deps.eos === undefined) return processSliceAtLeastOnce(job, deps, options);
  const o = { ...DEFAULT_PROCESS_SLICE_OPTIONS, ...options };
  return processSliceExactlyOnce(job, deps, deps.eos, { ...o, now: options.now ?? Date.now });
}
