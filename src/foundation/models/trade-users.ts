/**
 * The users a transaction names: its buyer and seller, or the one user of a single-party trade (a wage, a fee). User
 * discovery walks the ones a run does not know yet; the planner orders the per-user walks by how often the feed's
 * head page names each.
 */

/** The fields of a transaction that name a user. */
export const COUNTERPARTY_FIELDS = ['buyerId', 'sellerId', 'userId'] as const;

const OBJECT_ID = /^[a-f\d]{24}$/;

/**
 * The distinct, well-formed user ids one transaction names.
 * @example tradeUsers({ buyerId: 'a'.repeat(24), sellerId: 'a'.repeat(24) }) // ['aaaaaaaaaaaaaaaaaaaaaaaa']
 */
export function tradeUsers(item: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const f of COUNTERPARTY_FIELDS) {
    const v = item[f];
    if (typeof v === 'string' && OBJECT_ID.test(v) && !out.includes(v)) out.push(v);
  }
  return out;
}
