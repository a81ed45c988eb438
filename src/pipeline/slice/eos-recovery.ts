/**
 * Opening an exactly-once slice: fence earlier owners, read Kafka's last committed checkpoint from where the job data
 * (re-read after the fence) says it is, settle the previous owner's intent by it, count what it committed but did not
 * count, and save `eos.readFrom` in the job data. Kafka's checkpoint is the truth; the job data is a hint.
 */
import type { SliceJobData } from '../contract/job-types.js';
import { pageCommitted, parsePageKey, type PendingPage } from '../dedup/index.js';
import type { SliceCheckpoint, SliceSession } from '../../output/kafka/index.js';
import {
  countUpTo,
  createEosRun,
  DEFAULT_EXACTLY_ONCE_OPTIONS,
  ZERO,
  type EosRun,
  type ExactlyOnceSliceOptions,
  type SliceCheckpointState,
} from './eos-slice-run.js';
import type { ExactlyOnceDelivery, ProcessSliceDeps, SliceJobHandle } from './slice-contract.js';

/** Fences the slice and opens its session; `opened()`: whether an earlier owner saved `eos` in the job data. */
export async function openSession(
  job: SliceJobHandle,
  eos: ExactlyOnceDelivery,
  data: SliceJobData,
): Promise<{ session: SliceSession<SliceCheckpointState>; opened: boolean }> {
  let opened = data.eos !== undefined;
  const session = await eos.publisher.openSlice<SliceCheckpointState>(data.sliceId, {
    readFrom: async () => {
      const fresh = job.reload === undefined ? job.data : await job.reload();
      opened = opened || fresh.eos !== undefined;
      return fresh.eos?.readFrom ?? data.eos?.readFrom;
    },
  });
  return { session, opened };
}

/** The job data and checkpoint state the slice resumes from. */
function resumeFrom(
  data: SliceJobData,
  recovered: SliceCheckpoint<SliceCheckpointState> | null,
): { data: SliceJobData; state: SliceCheckpointState } {
  if (recovered === null)
    return {
      data,
      state: {
        cursor: data.cursor ?? null,
        start: data.start,
        done: false,
        counts: ZERO,
        pages: 0,
        splits: 0,
      },
    };
  const state = recovered.state;
  let resumed: SliceJobData = { ...data, start: state.start };
  if (state.cursor === null) delete resumed.cursor;
  else resumed = { ...resumed, cursor: state.cursor };
  return { data: resumed, state };
}

/**
 * Settles the earlier owners' open pages, before this session commits anything: Kafka's checkpoint says which
 * committed (`pageCommitted`: only pages of the session that wrote the checkpoint, up to its seq).
 */
async function settleIntent(
  eos: ExactlyOnceDelivery,
  sliceKey: string,
  opened: boolean,
  recovered: SliceCheckpoint<SliceCheckpointState> | null,
): Promise<void> {
  // An owner writes intents only after it saved `eos` in the job data: a slice no owner opened has none.
  const intent = opened ? await eos.marks.readIntent(sliceKey) : [];
  const committed = (p: PendingPage): boolean => pageCommitted(parsePageKey(p.pageKey), recovered);
  const committedPages = intent.filter(committed);
  const voidPages = intent.filter((p) => !committed(p));
  if (committedPages.length > 0) await eos.marks.settle(sliceKey, committedPages, true);
  if (voidPages.length > 0) await eos.marks.settle(sliceKey, voidPages, false);
}

/** Recovers the slice's run from its opened session (see the header). */
export async function recoverRun(
  job: SliceJobHandle,
  deps: ProcessSliceDeps,
  eos: ExactlyOnceDelivery,
  o: ExactlyOnceSliceOptions,
  opened: { session: SliceSession<SliceCheckpointState>; opened: boolean; data: SliceJobData },
): Promise<EosRun> {
  const { session } = opened;
  const recovered = session.recovered;
  const { data, state } = resumeFrom(opened.data, recovered);
  const sliceKey = data.sliceId;
  // This session is the slice's current one before the intent is read: an earlier session's page claimed by mark is
  // either in what is read here or refused (mark-claims.ts), so none can hide an id from this one.
  await eos.marks.openSlice(sliceKey, session.token);
  await settleIntent(eos, sliceKey, opened.opened, recovered);
  // Counters the previous owner committed but did not count (a crash between commit and count).
  await countUpTo(deps, data, state.counts, data.eos?.counted ?? ZERO);
  const counted = state.counts;
  const readFrom =
    recovered?.offset ?? data.eos?.readFrom ?? (await eos.publisher.lastStableOffset(sliceKey));
  const saved: SliceJobData = { ...data, eos: { readFrom, counted } };
  await job.checkpoint(saved);
  return createEosRun({
    ...{ job, deps, eos, o, session, sliceKey },
    bookMs: eos.bookMs ?? DEFAULT_EXACTLY_ONCE_OPTIONS.bookMs,
    data: saved,
    state,
    counted,
  });
}
