/**
 * What an upstream page holding fewer items than its `limit` means. Pure, so the client's reader (`readSlice`) and
 * the settings (`GAMEDATA_SHORT_PAGES`) read it from here.
 *
 * - `end`: the listing has no item older than the page's last: a page is the first `limit` items below its cursor
 *   (the simulator serves it so), so the read stops there.
 * - `confirm`: the read asks for one page more and stops on an empty one, for an upstream that may serve a short page
 *   with items below it. One call more per read: about half of a full history's calls at scale small and medium were
 *   these empty pages.
 *
 * `gamedata verify` always reads with `confirm`, so an upstream that breaks `end` shows as rows missing from the
 * topics (docs/guarantees.md, "A short page ends a read").
 */
export const SHORT_PAGES = ['end', 'confirm'] as const;
export type ShortPages = (typeof SHORT_PAGES)[number];
