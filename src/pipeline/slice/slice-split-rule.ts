import type { SliceJobData } from '../contract/job-types.js';
import { UNSPLIT_DEPTH } from '../planner/plan-partition.js';
import type { SplitRule } from '../../foundation/slicing/index.js';

/**
 * A per-user walk whose unread past is more than this many times wider than the span it read splits at quadrupling
 * depths (`splitGeometric`), not evenly: a user's rows crowd into the time since the user joined, so an even cut of
 * its history from 1970 leaves nearly every row in the reader's own piece (issue 11's acceptance run: a busy user's
 * walk split into 7 empty 11-month pieces and read its 12 remaining pages alone, one POST each, after every other
 * slice had finished). The feed's slices are cut evenly (their rows do not thin out with depth).
 */
export const USER_WALK_GEOMETRIC_ABOVE = 16;

/** How a running slice splits its unread rest, in both delivery paths. */
export function sliceSplitRule(
  data: Pick<SliceJobData, 'filters'>,
  o: { targetRows: number; splitFactor: number; maxSplitParts: number },
): SplitRule {
  return {
    rowsPerPart: o.targetRows,
    splitAbove: o.targetRows * o.splitFactor,
    maxParts: o.maxSplitParts,
    ...(data.filters['userId'] === undefined ? {} : { geometricAbove: USER_WALK_GEOMETRIC_ABOVE }),
  };
}

/**
 * Rows a piece of a tail split holds at most (2 pages); a slice splits only with more than two of them left, so a
 * piece holds more than a third of it (each piece ends on a page of its own: at most one page in ~2 more). 500 (5
 * pages) left a small full history's last slice, ~500 rows of one busy user, read alone as a chain of ~1 s rounds for
 * its last 5 s; the extra pages are the run's end's only, when slots stand idle.
 */
export const TAIL_PIECE_ROWS = 200;

/**
 * The rule of a slice at the run's end (issue 32), `spareSlots` > 0: the worker has slots no slice has filled for a
 * while, so nothing waits in the queue and the work left is in the slices running. A long one is then a chain of
 * ~1 s rounds at the real service's latency (0.6 s a request, 0.27 s a filtered page) that `sliceSplitRule` (pieces of
 * `targetRows`, 5 000) leaves whole: at scale medium the busiest user's walk read its last ~70 pages alone, for 70 s
 * of a 322 s run. So a slice with more than two pieces of {@link TAIL_PIECE_ROWS} left splits into pieces of about
 * that many rows, at most one per spare slot (beside its own part). `null`: no spare slot.
 */
export function tailSplitRule(rule: SplitRule, spareSlots: number): SplitRule | null {
  if (!(spareSlots >= 1)) return null;
  return {
    ...rule,
    rowsPerPart: Math.min(rule.rowsPerPart, TAIL_PIECE_ROWS),
    splitAbove: Math.min(rule.splitAbove, 2 * TAIL_PIECE_ROWS),
    maxParts: Math.min(rule.maxParts, 1 + Math.floor(spareSlots)),
  };
}

/** A full page of the upstream's listings (its largest `limit`). */
const DEFAULT_PAGE_ROWS = 100;

/**
 * Rows a piece holds when a per-user walk splits because the key has requests to spare ({@link spareKeySplitRule}):
 * half a page, so nearly every piece ends with its first page, read in the next round. A page's worth left pieces
 * of 100-110 rows (the density varies within a walk) that each read a second page, a round more.
 */
export const SPARE_KEY_PIECE_ROWS = 50;

/**
 * Most pieces (its own included) of a per-user walk's geometric split while the key has requests to spare. A walk's
 * unread past reaches back to 1970: the pieces end 0.5, 2 and 8 spans deep, and the last reaches back to the walk's
 * start. A busy user's older pages go to pieces that split again when read; a user with a few pages left spends at
 * most 3 calls more, in requests the key sends anyway.
 */
export const SPARE_KEY_GEOMETRIC_PARTS = 4;

/**
 * The rule of a per-user walk while the key has requests to spare and the slices waiting would find a slot (issue 32,
 * `keyHasSpare`): the walk is a chain of ~1 s rounds at the real service's latency, and the key would not be spent
 * meanwhile. At scale small the busiest user's 1 300 rows (13 pages) were the run's last 5-10 s, read page after page
 * while nearly every other slice had finished: `sliceSplitRule` splits only above 10 000 rows, and a tail split waits
 * for idle slots. So a walk that has read `minPagesBeforeSplit` pages (a piece of a split: one, see `slice-walk.ts`)
 * with more than two pages estimated left splits: geometric while its unread past is far wider than what it read
 * ({@link SPARE_KEY_GEOMETRIC_PARTS}), else into pieces of half a page ({@link SPARE_KEY_PIECE_ROWS}, at most
 * `maxSplitParts`), nesting as tail splits do. `null` for other slices (the
 * feed's splits cost the key's serialised time; the partition plan's walks have their own tail rules).
 */
export function spareKeySplitRule(
  data: Pick<SliceJobData, 'filters' | 'depth'>,
  o: { maxDepth: number; maxSplitParts: number },
): SplitRule | null {
  if (data.filters['userId'] === undefined || isQuietWalk(data)) return null;
  if (data.depth >= tailNesting(o)) return null;
  return {
    rowsPerPart: SPARE_KEY_PIECE_ROWS,
    splitAbove: 2 * DEFAULT_PAGE_ROWS,
    maxParts: o.maxSplitParts,
    geometricAbove: USER_WALK_GEOMETRIC_ABOVE,
    geometricParts: SPARE_KEY_GEOMETRIC_PARTS,
  };
}

/**
 * How deep tail splits nest below a slice's planned depth (0, or `UNSPLIT_DEPTH` for a quiet walk), against
 * `maxDepth` (6) for the rule's own splits. A quiet walk's geometric tail split leaves its oldest piece reaching back
 * to 1970 and holding the walk's older rows; that piece splits the same way when slots are idle again, one level
 * deeper each time. At `maxDepth` the partition plan's last 60 s at scale medium were four such pieces, 6 levels deep,
 * read alone. Tail splits need idle slots and more than two pieces of `TAIL_PIECE_ROWS` left, so they stop on their own.
 */
export const TAIL_MAX_DEPTH = 18;

/** How deep splits made at the run's end or on a spare key nest: `TAIL_MAX_DEPTH`, or `maxDepth` if deeper. */
function tailNesting(o: { maxDepth: number }): number {
  return Math.max(o.maxDepth, TAIL_MAX_DEPTH);
}

/**
 * Fewest parts of a quiet walk's tail split (its own included), whatever the idle slots. Its geometric cut keeps half
 * the span it read and hands the rest, back to 1970, to the older pieces; in two parts, every split peeled ~100 rows
 * off a walk holding thousands and used a nesting level for it (a walk 18 levels deep was read alone for the partition
 * plan's last 50 s at medium). In six, the pieces reach back 0.5, 2, 8, 32 and 128 times the span read: the walk's
 * older rows spread over several pieces, and those beyond the slots wait in the queue for the next free one.
 */
export const UNSPLIT_TAIL_PARTS = 6;

/**
 * Pages a quiet walk (or a piece of one) reads before a tail split: its rows left cannot be estimated (its past reaches
 * back to 1970, so every estimate says "many"), and the pieces of a short walk are mostly empty pages. A walk still
 * going after this many pages (1 000 rows) is a long one. At scale small (quiet walks of a few hundred rows) splitting
 * after two pages took the partition plan from 201 to 241 transaction pages (1.68x to 2.01x the rows' own), after
 * five to 228.
 */
export const UNSPLIT_TAIL_MIN_PAGES = 10;

/** Whether `data` is a slice planned not to split (a partition's quiet walk, or a tail piece of one). */
export function isQuietWalk(data: Pick<SliceJobData, 'depth'>): boolean {
  return data.depth >= UNSPLIT_DEPTH;
}

/**
 * The tail rule of `data` (see {@link tailSplitRule}), by its depth: a slice under `TAIL_MAX_DEPTH` splits as its own
 * rule says, only finer; a slice planned not to split (a partition's quiet walk, one slice from the run's `since`,
 * planned at `UNSPLIT_DEPTH`) splits at the run's end too, at quadrupling depths first (its unread past reaches back to
 * 1970, and an even cut of it at the rate of its newest pages would be mostly empty pieces), its pieces nesting at most
 * `TAIL_MAX_DEPTH` deep below it. At scale medium the partition plan's last two minutes were such walks read alone.
 */
export function tailSplitRuleOf(
  data: Pick<SliceJobData, 'filters' | 'depth'>,
  o: { targetRows: number; splitFactor: number; maxSplitParts: number; maxDepth: number },
  spareSlots: number,
): SplitRule | null {
  const rule = sliceSplitRule(data, o);
  const nesting = tailNesting(o);
  if (!isQuietWalk(data)) return data.depth < nesting ? tailSplitRule(rule, spareSlots) : null;
  if (data.depth >= UNSPLIT_DEPTH + nesting) return null;
  const tail = tailSplitRule({ ...rule, geometricAbove: USER_WALK_GEOMETRIC_ABOVE }, spareSlots);
  return tail === null
    ? null
    : { ...tail, maxParts: Math.min(rule.maxParts, Math.max(tail.maxParts, UNSPLIT_TAIL_PARTS)) };
}
