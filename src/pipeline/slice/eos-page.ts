/**
 * One page of an exactly-once slice joins the open transaction: its ids are claimed for the page key
 * `<sliceId>#<seq>@<producer>~<session>` (dedup/pending-marks: the intent first, then the locks; another slice's
 * orphaned page is resolved by making sure its session commits nothing more and reading its checkpoint), the fresh
 * records are encoded and added to the session with their dead letters, and the open transaction's counts grow.
 */
import { createHash } from 'node:crypto';
import type { DedupRecord } from '../dedup/index.js';
import { hasDedupId, pageCommitted, pageKeyOf, parsePageKey } from '../dedup/index.js';
import type { EosRun, SliceCheckpointState } from './eos-slice-run.js';
import type { ExactlyOnceDelivery, SlicePage } from './slice-contract.js';
import { pageLineage } from './slice-contract.js';
import { ownedRows } from './row-owner.js';

/**
 * The dedup identity of a record without `_id`: a digest of its JSON (keys in order of appearance, as upstream sent
 * them). Two records of identical content and no id are one dead letter; nothing else can tell them apart.
 */
export function anonymousId(record: DedupRecord): string {
  // Records are parsed JSON (no cycles, no BigInt): stringify cannot throw.
  const text = JSON.stringify(record);
  return `anon-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/**
 * A resolver of another slice's orphaned page: a page of a live session of this process is waited for; else the
 * page's producer is fenced where it could still commit, and the slice's checkpoint says whether the page's session
 * committed it (`pageCommitted`).
 */
export function foreignPageResolver(
  eos: ExactlyOnceDelivery,
): (pageKey: string) => Promise<boolean | 'live'> {
  return async (pageKey) => {
    const foreign = parsePageKey(pageKey);
    if (foreign.session !== undefined && eos.publisher.sessionLive?.(foreign.session) === true) return 'live';
    // The page's producer only, and only while it can still commit (see fenceWriter); a page key of an older version
    // (no writer) fences every owner of the slice.
    if (foreign.writer !== undefined && eos.publisher.fenceWriter !== undefined)
      await eos.publisher.fenceWriter(foreign.sliceKey, foreign.writer);
    else await eos.publisher.fence(foreign.sliceKey);
    // Only checkpoints of the page's session or later ones decide, and they all lie at or after its `readFrom`: the
    // read starts there, not at the start of the compacted partition (which grows with the pipeline's age).
    const ckpt = await eos.publisher.readCommitted<SliceCheckpointState>(foreign.sliceKey, foreign.readFrom);
    return pageCommitted(foreign, ckpt);
  };
}

/** Claims the page's records for its page key (the intent first); the fresh records and the repeats. */
async function claimRecords(run: EosRun, items: DedupRecord[]) {
  const { eos, sliceKey, session, o } = run;
  const scope = run.data.replay ? run.data.runId : undefined;
  // A record without a usable `_id` (it will be dead-lettered) is claimed under a digest of its content, so the same
  // malformed record read by two slices (a trade under its buyer and its seller) is dead-lettered once.
  const originals = new Map<DedupRecord, DedupRecord>();
  const claimed = items.map((item) => {
    if (hasDedupId(item)) return item;
    const stand = { ...item, _id: anonymousId(item) };
    originals.set(stand, item);
    return stand;
  });
  const claim = await eos.marks.claim(
    pageKeyOf(sliceKey, session.nextSeq, session.owner, session.token, run.data.eos?.readFrom),
    run.data.resource,
    claimed,
    foreignPageResolver(eos),
    {
      // A run alone on its resource claims by mark (no lock); a `--replay` claims against its own set, with locks.
      ...(scope === undefined ? { run: run.data.runId } : { scope }),
      ...(o.signal === undefined ? {} : { signal: o.signal }),
      // Waiting for another page: commit ours first, so a page of ours that holds an id is settled.
      onWait: () => run.commitOpen(),
    },
  );
  return { ...claim, fresh: claim.fresh.map((r) => originals.get(r) ?? r) };
}

/** Adds `page` (read at `fetchedAt`) to the open transaction, and moves the slice's cursor past it. */
export async function addPage(run: EosRun, page: SlicePage, fetchedAt: number): Promise<void> {
  const { deps, eos, o } = run;
  const resource = run.data.resource;
  const items: DedupRecord[] = deps.source.enrich
    ? await deps.source.enrich(resource, page.items, o.signal)
    : page.items;
  // Rows another walk of the run owns (a trade's other party, row-owner.ts) are that walk's to claim and publish.
  const { owned, others } = ownedRows(page.walker, items);
  const claim = await claimRecords(run, owned);
  const encoded =
    claim.fresh.length === 0
      ? undefined
      : await eos.encode({
          resource,
          records: claim.fresh,
          lineage: pageLineage(run.data, deps.source, fetchedAt),
        });
  run.join({
    sent: {
      topic: encoded?.topic ?? '',
      records: encoded?.records ?? [],
      dlqTopic: encoded?.dlqTopic ?? '',
      deadLetters: encoded?.deadLetterMessages ?? [],
    },
    claimed: claim.page,
    counts: {
      fetched: page.items.length,
      published: encoded?.records.length ?? 0,
      deduplicated: claim.repeats + others,
      deadLettered: encoded?.deadLetterMessages.length ?? 0,
    },
    cursor: page.cursor,
  });
}
