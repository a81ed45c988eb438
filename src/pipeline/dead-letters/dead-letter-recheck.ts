/**
 * The pure half of `gamedata dlq replay` (issue 48, item 8): a dead letter read back from `<topic>.dlq`, and the check
 * that decides whether it can be republished now. A record whose resource has a read by id (spec §4: `user.getUserById`,
 * `party.getById`) is fetched again, so a fix upstream is what gets published; any other record's stored copy is checked
 * again against today's schema (a catalogue or registry change may have made it valid). What still fails stays in the
 * DLQ, with today's reason.
 */
import { EncodingError, GamedataError, NotFoundError } from '../../foundation/errors/index.js';
import { RESOURCE_INFO, type ResourceName } from '../../foundation/models/index.js';
import type { DedupRecord } from '../dedup/index.js';
import { HEADER } from '../publish/index.js';

/** One message of a dead-letter topic, as the replay needs it. */
export interface DeadLetter {
  partition: number;
  offset: string;
  /** When it was dead-lettered (the Kafka timestamp, ms). */
  timestamp: number;
  /** The record's `_id` (the message key), or null when it had none. */
  id: string | null;
  /** The stored copy: the original JSON, parsed; `undefined` when it cannot be read back (cut, or not JSON). */
  record: unknown;
  /** The reason it was dead-lettered (`gamedata.error.reason`). */
  reason: string;
}

/** Why a dead letter stays in the DLQ: today's encoding reason, or one of the replay's own. */
export type LeftReason =
  | EncodingError['reason']
  /** Read by id again, the upstream answered 404: the record is gone. */
  | 'gone-upstream'
  /** The stored copy was cut (`gamedata.dlq.truncated`) or is not JSON, and there is no read by id. */
  | 'unreadable'
  /**
   * A stored copy of a changing resource (articles, elections) whose entity has a newer version seen since:
   * republishing it would move the compacted topic back in time.
   */
  | 'superseded';

export interface RecheckOutcome {
  /** The records that encode now, in the DLQ's order: what the replay republishes. */
  ready: DedupRecord[];
  /** The dead letters that stay, each with why. */
  left: { letter: DeadLetter; reason: LeftReason }[];
  /** How many of `ready` were fetched again from the upstream (the rest are stored copies). */
  refetched: number;
}

export interface RecheckDeps {
  /**
   * Reads the record by id from the upstream (the resources that have such a read), or `undefined` when the resource
   * has none. Rejects with {@link NotFoundError} for a record the upstream no longer has.
   */
  refetch?: ((resource: ResourceName, id: string) => Promise<unknown>) | undefined;
  /** Encodes the record as the pipeline would: resolves, or rejects with an {@link EncodingError}. */
  validate(resource: ResourceName, record: unknown): Promise<unknown>;
  /**
   * Per stored copy that encodes now, whether a newer version of its entity was seen since (`DedupStore.newerSeen`);
   * those stay as `superseded`. Asked only for changing resources. @default none asked
   */
  newerSeen?: ((resource: ResourceName, records: readonly DedupRecord[]) => Promise<boolean[]>) | undefined;
}

/** The upstream's read by id of each resource that has one (spec §4), with its input's name. */
export const READ_BY_ID: Partial<Record<ResourceName, { procedure: string; input: string }>> = {
  users: { procedure: 'user.getUserById', input: 'userId' },
  parties: { procedure: 'party.getById', input: 'partyId' },
  // `article.getArticleById` exists but counts a view and returns the full Article, not the feed item the topic holds
  // (upstream-facts.md): articles are checked from their stored copy.
};

/** A dead letter from a DLQ message (header values as strings, as `readTopic` gives them). */
export function parseDeadLetter(m: {
  partition: number;
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string>;
}): DeadLetter {
  let record: unknown;
  if (m.headers[HEADER.truncated] !== 'true' && m.value !== null) {
    try {
      record = JSON.parse(m.value.toString('utf8'));
    } catch {
      record = undefined;
    }
  }
  const key = m.key?.toString('utf8') ?? '';
  return {
    partition: m.partition,
    offset: m.offset,
    timestamp: Number(m.timestamp),
    id: key === '' ? null : key,
    record,
    reason: m.headers[HEADER.errorReason] ?? '',
  };
}

const isRecord = (value: unknown): value is DedupRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The record to check again: the upstream's current copy where it has a read by id, else the stored one. */
async function candidateOf(
  resource: ResourceName,
  letter: DeadLetter,
  deps: RecheckDeps,
): Promise<{ record: unknown; refetched: boolean } | LeftReason> {
  if (letter.id !== null && deps.refetch !== undefined && READ_BY_ID[resource] !== undefined) {
    try {
      return { record: await deps.refetch(resource, letter.id), refetched: true };
    } catch (error) {
      if (error instanceof NotFoundError) return 'gone-upstream';
      throw error; // the upstream failed: the replay stops, nothing was published
    }
  }
  return letter.record === undefined ? 'unreadable' : { record: letter.record, refetched: false };
}

type Outcome = { record: DedupRecord; refetched: boolean } | LeftReason;

/** Stored copies of a changing resource whose entity has a newer version seen become `superseded` (in place). */
async function markSuperseded(resource: ResourceName, outcomes: Outcome[], deps: RecheckDeps): Promise<void> {
  if (deps.newerSeen === undefined || RESOURCE_INFO[resource].dedup !== 'version') return;
  const stored = outcomes.flatMap((o, i) => (typeof o !== 'string' && !o.refetched ? [i] : []));
  if (stored.length === 0) return;
  const newer = await deps.newerSeen(
    resource,
    stored.map((i) => (outcomes[i] as { record: DedupRecord }).record),
  );
  stored.forEach((index, k) => {
    if (newer[k] === true) outcomes[index] = 'superseded';
  });
}

/**
 * Checks each dead letter again (see the file's header), all at once: refetches ride the client's batches.
 * @throws whatever the upstream or the registry throws that is not a record's own problem (nothing is published then)
 */
export async function recheckDeadLetters(
  resource: ResourceName,
  letters: readonly DeadLetter[],
  deps: RecheckDeps,
): Promise<RecheckOutcome> {
  const outcomes = await Promise.all(
    letters.map(async (letter): Promise<Outcome> => {
      const candidate = await candidateOf(resource, letter, deps);
      if (typeof candidate === 'string') return candidate;
      if (!isRecord(candidate.record)) return 'not-a-record';
      try {
        await deps.validate(resource, candidate.record);
      } catch (error) {
        if (error instanceof EncodingError) return error.reason;
        throw GamedataError.from(error);
      }
      return { record: candidate.record, refetched: candidate.refetched };
    }),
  );
  await markSuperseded(resource, outcomes, deps);
  const out: RecheckOutcome = { ready: [], left: [], refetched: 0 };
  outcomes.forEach((o, i) => {
    if (typeof o === 'string') out.left.push({ letter: letters[i]!, reason: o });
    else {
      out.ready.push(o.record);
      if (o.refetched) out.refetched += 1;
    }
  });
  return out;
}
