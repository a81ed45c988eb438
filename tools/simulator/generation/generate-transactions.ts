/**
 * Transactions: the big table. Times are spread over the history with a denser last 72 h and two
 * same-millisecond bursts (one inside the window, one beyond it); attributes are a pure function of seed and
 * identity, so live arrivals draw them the same way. Indexed by user, type, country, item, unit and party.
 */
import { createColumn, type Column } from '../internal/growable.js';
import { createRng, hash32, type Rng } from '../internal/prng.js';
import { createOrderedTable, type OrderedTable } from '../ordered-table.js';
import { CASE_CODES, GOOD_CODES, ITEM_CODES, TRANSACTION_TYPES, TRANSACTION_TYPE_WEIGHTS } from '../vocab.js';
import { DAY, HOUR, STREAM, WINDOW_MS, secondsOf, sortedTimes, weighted } from './draws.js';
import type { DrawDonationTarget } from './generate-donations.js';
import type { Population } from './generate-population.js';
import type { ScaleSpec } from './scales.js';

/** Transaction attributes by identity (creation counter); `-1` = none (a row without `countryId`: see `withoutCountry`). */
export interface TransactionColumns {
  type: Column<Uint8Array>;
  buyer: Column<Int32Array>;
  seller: Column<Int32Array>;
  item: Column<Int32Array>;
  country: Column<Int32Array>;
  mu: Column<Int32Array>;
  party: Column<Int32Array>;
}

/** Where each kind of item starts in ITEM_CODES: goods, then cases, then equipment. */
export const CASE_BASE = GOOD_CODES.length;
export const EQUIPMENT_BASE = CASE_BASE + CASE_CODES.length;

export interface TransactionRows {
  readonly table: OrderedTable;
  readonly tx: TransactionColumns;
  /** Draws and appends the attributes of transaction `ident` (`bulkType` forces the type, for bursts). */
  readonly pushAttrs: (ident: number, bulkType: number | undefined) => void;
  /** Adds a row to every index it belongs to. */
  readonly index: (row: number) => void;
}

/**
 * The sorted times of every transaction: spread over the history, denser in the last 72 h, and the two
 * same-millisecond bursts (`burstAt` inside the window, `olderBurstAt` beyond it).
 */
function drawTransactionTimes(
  seed: number,
  spec: ScaleSpec,
  startMs: number,
): { txTimes: Float64Array; burstAt: number; olderBurstAt: number } {
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(hash32(seed, STREAM.transactions));
  const nTx = spec.transactions;
  const inWindow = Math.floor(nTx * spec.windowShare);
  const burstAt = startMs - 30 * HOUR - 123; // inside the last 72 h, at every scale
  const olderBurstAt = startMs - 20 * DAY - 457; // and one beyond the window (reachable through filters)
  const olderBurst = Math.min(120, Math.floor(spec.burst / 2) + 20);
  const spread = nTx - inWindow - olderBurst;
  const txTimes = new Float64Array(nTx);
  txTimes.set(sortedTimes(rng, spread, historyStart, startMs - WINDOW_MS, 0.05), 0);
  txTimes.set(sortedTimes(rng, inWindow - spec.burst, startMs - WINDOW_MS, startMs - 1, 0.05), spread);
  txTimes.fill(burstAt, inWindow - spec.burst + spread, inWindow + spread);
  txTimes.fill(olderBurstAt, inWindow + spread);
  txTimes.sort();
  return { txTimes, burstAt, olderBurstAt };
}

function createTransactionColumns(nTx: number): TransactionColumns {
  return {
    type: createColumn(Uint8Array, nTx),
    buyer: createColumn(Int32Array, nTx),
    seller: createColumn(Int32Array, nTx),
    item: createColumn(Int32Array, nTx),
    country: createColumn(Int32Array, nTx),
    mu: createColumn(Int32Array, nTx),
    party: createColumn(Int32Array, nTx),
  };
}

/** Adds a row to every index it belongs to (user: buyer and seller, type, country, item, unit, party). */
function indexTransactionRow(table: OrderedTable, tx: TransactionColumns, row: number): void {
  const ident = table.ident(row);
  const buyer = tx.buyer.get(ident);
  const seller = tx.seller.get(ident);
  table.addToIndex('user', buyer, row);
  if (seller >= 0 && seller !== buyer) table.addToIndex('user', seller, row);
  table.addToIndex('type', tx.type.get(ident), row);
  const country = tx.country.get(ident);
  if (country >= 0) table.addToIndex('country', country, row);
  const item = tx.item.get(ident);
  if (item >= 0) table.addToIndex('item', item, row);
  const mu = tx.mu.get(ident);
  if (mu >= 0) table.addToIndex('mu', mu, row);
  const party = tx.party.get(ident);
  if (party >= 0) table.addToIndex('party', party, row);
}

export function generateTransactions(
  seed: number,
  spec: ScaleSpec,
  startMs: number,
  population: Population,
  drawDonationTarget: DrawDonationTarget,
  /** Share of each type's rows without a country (`WorldOptions.transactionsWithoutCountry`). */
  withoutCountry: Readonly<Partial<Record<string, number>>> = {},
): TransactionRows {
  const { pickUser, userCountry, userMu } = population;
  const nTx = spec.transactions;
  const { txTimes, burstAt, olderBurstAt } = drawTransactionTimes(seed, spec, startMs);
  const tx = createTransactionColumns(nTx);
  const typeWeightTotal = TRANSACTION_TYPE_WEIGHTS.reduce((a, b) => a + b, 0);
  const goodBase = 0;
  const equipCount = ITEM_CODES.length - EQUIPMENT_BASE;
  const burstType = TRANSACTION_TYPES.indexOf('openCase');
  const txRng = createRng(0);
  const otherUser = (r: Rng, not: number): number => {
    const o = pickUser(r);
    return o === not ? (o + 1) % spec.users : o;
  };
  const pushAttrs = (ident: number, bulkType: number | undefined): void => {
    const r = txRng;
    r.reseed(hash32(seed, STREAM.transactions, ident));
    const type = bulkType ?? weighted(r, TRANSACTION_TYPE_WEIGHTS, typeWeightTotal);
    const buyer = pickUser(r);
    let seller = -1;
    let item = -1;
    let country = userCountry.get(buyer);
    let mu = -1;
    let party = -1;
    switch (TRANSACTION_TYPES[type]) {
      case 'trading':
        seller = otherUser(r, buyer);
        item = goodBase + r.int(GOOD_CODES.length);
        break;
      case 'itemMarket':
        seller = otherUser(r, buyer);
        item = EQUIPMENT_BASE + r.int(equipCount);
        break;
      case 'wage':
      case 'articleTip':
        seller = otherUser(r, buyer);
        break;
      case 'donation': {
        const [kind, target] = drawDonationTarget(r, buyer);
        if (kind === 0) mu = target;
        else if (kind === 1) country = target;
        else party = target;
        break;
      }
      case 'openCase':
        item = CASE_BASE + r.int(CASE_CODES.length);
        break;
      case 'craftItem':
      case 'dismantleItem':
        item = EQUIPMENT_BASE + r.int(equipCount);
        break;
      case 'battleLoot':
        item = r.chance(0.5) ? EQUIPMENT_BASE + r.int(equipCount) : goodBase + r.int(GOOD_CODES.length);
        mu = userMu.get(buyer) >= 0 ? userMu.get(buyer) : r.int(spec.mus);
        break;
      default:
        break;
    }
    // Outside a per-country partition: drawn from the identity alone (not from `r`), so no other draw moves.
    const noCountry = withoutCountry[TRANSACTION_TYPES[type] as string] ?? 0;
    if (noCountry > 0 && hash32(seed, STREAM.transactions, ident, 0x6e6f) / 2 ** 32 < noCountry) country = -1;
    tx.type.push(type);
    tx.buyer.push(buyer);
    tx.seller.push(seller);
    tx.item.push(item);
    tx.country.push(country);
    tx.mu.push(mu);
    tx.party.push(party);
  };
  for (let ident = 0; ident < nTx; ident++) {
    // The bulk action of the burst: one user opens a pile of cases in one millisecond.
    pushAttrs(ident, txTimes[ident] === burstAt || txTimes[ident] === olderBurstAt ? burstType : undefined);
  }
  const table = createOrderedTable('transactions', seed, txTimes, secondsOf(txTimes));
  const index = (row: number): void => indexTransactionRow(table, tx, row);
  for (let row = 0; row < table.length; row++) index(row);
  return { table, tx, pushAttrs, index };
}
