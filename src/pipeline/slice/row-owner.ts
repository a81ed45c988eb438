/**
 * One owner walk per trade (issue 47): in a run that walks transactions per user, a trade is read by its buyer's walk
 * and by its seller's walk. It belongs to the walk of the smaller of the two ids, and the other walk drops it before
 * any claim, so two slices of one run never claim the same id and the claim path has nothing to wait for.
 *
 * Why every row keeps exactly one claimer (docs/guarantees.md, "One owner per trade"): the `userId` filter matches a
 * trade's buyer and its seller; every party a walked page names is walked (the run's user set holds the listed users,
 * and user discovery adds a walk for every other party before the page is handed on); so both parties of any trade a
 * walk reads are walked, over the run's whole range, and exactly one of them is the smaller id. A row the rule cannot
 * place (the walk's user is not among its well-formed parties: a malformed record) is claimed as before, and the
 * claims keep it exact.
 */
const OBJECT_ID = /^[a-f\d]{24}$/;

/** The trade's distinct well-formed parties, as the `userId` filter matches them (buyer, seller). */
function parties(row: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const v of [row['buyerId'], row['sellerId']])
    if (typeof v === 'string' && OBJECT_ID.test(v) && !out.includes(v)) out.push(v);
  return out;
}

/**
 * Whether the per-user walk of `walker` is the one that claims `row`: false when the row's other party has the
 * smaller id (that party's walk claims it); true otherwise, and whenever the rule cannot tell.
 * @example ownsTrade('b'.repeat(24), { buyerId: 'a'.repeat(24), sellerId: 'b'.repeat(24) }) // false
 */
export function ownsTrade(walker: string, row: Readonly<Record<string, unknown>>): boolean {
  const p = parties(row);
  if (!p.includes(walker)) return true;
  return p.every((id) => id >= walker);
}

/**
 * The rows of a page its walk claims, and how many it leaves to their owner walks (counted as deduplicated: the
 * owner publishes them). A page without a `walker` claims every row.
 */
export function ownedRows<T extends Readonly<Record<string, unknown>>>(
  walker: string | undefined,
  items: readonly T[],
): { owned: T[]; others: number } {
  if (walker === undefined) return { owned: [...items], others: 0 };
  const owned = items.filter((row) => ownsTrade(walker, row));
  return { owned, others: items.length - owned.length };
}
