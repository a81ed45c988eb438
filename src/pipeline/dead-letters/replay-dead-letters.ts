/**
 * `gamedata dlq replay <resource>` (issue 48, item 8): reads the resource's dead-letter topic (read_committed), checks
 * each dead letter again (`dead-letter-recheck.ts`), and republishes the ones that now encode as ONE slice of the
 * pipeline's own, through `processSlice`: in the deployment's delivery mode, with its dedup, its Kafka transaction and
 * its checkpoint. What still fails stays in the DLQ with today's reason; nothing is written to the DLQ by the replay
 * (a record that encodes in the check and not a moment later is the one exception: it is dead-lettered again).
 *
 * Exactly once over any number of replays: the slice is a run of its own, `dlq-replay.<resource>`, with `replay: true`,
 * so its claims check the seen-set scoped to that run (`<prefix>:seen:<resource>` keeps the dead letter's own mark, see
 * docs/operations.md "Replaying dead letters") and its marks go to both sets. A record the replay published is in the
 * scoped set, and the next replay finds it there (counted as already republished). Each replay is a slice of its own
 * (a new slice id), so a record fixed after a replay is republished by the next one; a replay killed midway leaves
 * its claims to the next one's, which resolves them as any slice resolves another's orphaned page (exactly-once: its
 * producer fenced, its checkpoint read).
 */
import { randomUUID } from 'node:crypto';
import type { ResourceName } from '../../foundation/models/index.js';
import { dlqTopicName } from '../../foundation/models/index.js';
import type { SliceJobData, SliceResult } from '../contract/job-types.js';
import type { DedupRecord } from '../dedup/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import { readTopic } from '../../output/kafka/index.js';
import { processSlice } from '../slice/process-slice.js';
import type { ProcessSliceDeps, SliceJobHandle, SliceSource } from '../slice/slice-contract.js';
import {
  parseDeadLetter,
  READ_BY_ID,
  recheckDeadLetters,
  type DeadLetter,
  type LeftReason,
  type RecheckDeps,
} from './dead-letter-recheck.js';

/** The source operation of a republished stored copy (lineage header `gamedata.source.operation`). */
export const DLQ_STORED_COPY_OPERATION = 'gamedata.dlq.stored-copy';

/** The run every replay of a resource's dead letters belongs to: its seen-set scope. */
export const dlqReplayRunId = (resource: ResourceName): string => `dlq-replay.${resource}`;

export interface ReplayDeadLettersOptions extends RecheckDeps {
  resource: ResourceName;
  /** The resource's topic (`<prefix>.<resource>`); its DLQ is `<topic>.dlq`. Required. */
  topic: string;
  brokers: readonly string[];
  /** Only dead letters written at or after this time (ms, the Kafka timestamp). @default 0 */
  since?: number | undefined;
  /** Only dead letters written before this time (ms). @default no bound */
  until?: number | undefined;
  /** The pipeline's slice deps (`createPipelineRuntime`'s); their source is replaced by the dead letters. */
  deps: Omit<ProcessSliceDeps, 'source'>;
  /** Records per page of the replay's slice. @default 100 */
  pageSize?: number;
  now?: () => number;
}

export interface DlqReplayReport {
  resource: ResourceName;
  dlqTopic: string;
  /** Messages on the DLQ, and those written inside `[since, until)`. */
  deadLetters: number;
  inRange: number;
  /** The dead letters that encode now (republished or already republished). */
  encodable: number;
  /** Of those, read again from the upstream (the rest are stored copies). */
  refetched: number;
  /** Republished on the resource's topic by this replay. */
  republished: number;
  /** Would encode now, but an earlier replay (or this one, twice in the DLQ) published them already. */
  alreadyRepublished: number;
  /** Encoded in the check, failed when published: dead-lettered again with the new reason. */
  deadLetteredAgain: number;
  /** The dead letters that stay, by today's reason. */
  left: Partial<Record<LeftReason, number>>;
}

/** Reads the dead letters of `dlqTopic` written in `[since, until)`. */
async function readDeadLetters(
  o: ReplayDeadLettersOptions,
  dlqTopic: string,
): Promise<{ all: number; letters: DeadLetter[] }> {
  const since = o.since ?? 0;
  const until = o.until ?? Number.POSITIVE_INFINITY;
  const letters: DeadLetter[] = [];
  const all = await readTopic({ brokers: o.brokers, topic: dlqTopic }, (m) => {
    const letter = parseDeadLetter(m);
    if (letter.timestamp >= since && letter.timestamp < until) letters.push(letter);
  });
  // In Kafka's order per partition; partitions one after the other (the same _id is always on one partition).
  letters.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  return { all, letters };
}

/** The replay's page source: the records that now encode, `pageSize` at a time; the cursor is the next index. */
function readySource(ready: readonly DedupRecord[], pageSize: number): SliceSource {
  return {
    operation: (resource) => READ_BY_ID[resource]?.procedure ?? DLQ_STORED_COPY_OPERATION,
    // eslint-disable-next-line @typescript-eslint/require-await -- the slice path reads pages as an async iterable
    async *readPages(_slice, options) {
      let at = options.cursor === undefined ? 0 : Number(options.cursor);
      while (at < ready.length) {
        const items = ready.slice(at, at + pageSize);
        at += items.length;
        yield { items, cursor: at >= ready.length ? null : String(at) };
      }
    },
  };
}

/** A job handle kept in memory: a replay that dies is not resumed, the next replay is a slice of its own. */
function memoryJob(data: SliceJobData): SliceJobHandle {
  let current = data;
  return {
    get data() {
      return current;
    },
    checkpoint(next) {
      current = next;
      return Promise.resolve();
    },
    spawn() {
      return Promise.reject(new ConfigError('a dlq replay slice never splits'));
    },
    reload: () => Promise.resolve(current),
  };
}

/** Runs the replay's one slice over `ready` (see the file's header). */
function republish(
  o: ReplayDeadLettersOptions,
  ready: readonly DedupRecord[],
  now: number,
): Promise<SliceResult> {
  const runId = dlqReplayRunId(o.resource);
  const data: SliceJobData = {
    runId,
    sliceId: `${runId}.${String(now)}.${randomUUID().slice(0, 8)}`,
    resource: o.resource,
    filters: {},
    start: o.since ?? 0,
    end: o.until ?? Number.MAX_SAFE_INTEGER,
    replay: true,
    depth: 0,
  };
  const pageSize = o.pageSize ?? 100;
  const deps: ProcessSliceDeps = { ...o.deps, source: readySource(ready, pageSize) };
  // maxDepth 0 and no spare slots: the slice never splits (its "times" are not a listing's).
  return processSlice(memoryJob(data), deps, { pageSize, maxDepth: 0, now: o.now ?? Date.now });
}

/**
 * Replays the resource's dead letters (see the file's header).
 * @throws ServiceError when Kafka, the registry or Redis fails, or an upstream error other than a 404 on a read by id
 *   (nothing of the failed step is published; running the replay again is safe)
 */
export async function replayDeadLetters(o: ReplayDeadLettersOptions): Promise<DlqReplayReport> {
  const dlqTopic = dlqTopicName(o.topic);
  const { all, letters } = await readDeadLetters(o, dlqTopic);
  const checked = await recheckDeadLetters(o.resource, letters, o);
  const left: Partial<Record<LeftReason, number>> = {};
  for (const l of checked.left) left[l.reason] = (left[l.reason] ?? 0) + 1;
  const report: DlqReplayReport = {
    resource: o.resource,
    dlqTopic,
    deadLetters: all,
    inRange: letters.length,
    encodable: checked.ready.length,
    refetched: checked.refetched,
    republished: 0,
    alreadyRepublished: 0,
    deadLetteredAgain: 0,
    left,
  };
  if (checked.ready.length === 0) return report;
  const result = await republish(o, checked.ready, (o.now ?? Date.now)());
  return {
    ...report,
    republished: result.published,
    alreadyRepublished: result.deduplicated,
    deadLetteredAgain: result.deadLettered,
  };
}

/** The replay's one summary line: how many were republished, and how many stay and why. */
export function formatDlqReplay(r: DlqReplayReport): string {
  const reasons = Object.entries(r.left)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([reason, n]) => `${String(n)} ${reason}`);
  const leftCount = Object.values(r.left).reduce((a, n) => a + n, 0) + r.deadLetteredAgain;
  const again = r.deadLetteredAgain > 0 ? `, ${String(r.deadLetteredAgain)} failed again when published` : '';
  return (
    `dlq replay ${r.resource}: ${String(r.inRange)} of ${String(r.deadLetters)} dead letters in range; ` +
    `${String(r.encodable)} encode now (${String(r.refetched)} read again from the upstream): ` +
    `republished ${String(r.republished)}, ${String(r.alreadyRepublished)} already republished; ` +
    `${String(leftCount)} left in ${r.dlqTopic}` +
    (reasons.length > 0 ? `: ${reasons.join(', ')}` : '') +
    again
  );
}
