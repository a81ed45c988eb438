/**
 * Transactions: immutable; money and quantity from the transaction's stream, the traded or unboxed piece from
 * the equipment builder, and (with `extraFields`) the buyer's and seller's country and unit the real service adds.
 */
import { DAY, STREAM, round2 } from '../generation/draws.js';
import { CASE_BASE, EQUIPMENT_BASE } from '../generation/generate-transactions.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32 } from '../internal/prng.js';
import { EQUIPMENT_CODES, EQUIPMENT_SLOTS, ITEM_CODES, TRANSACTION_TYPES } from '../vocab.js';
import type { EquipmentBuilder } from './build-equipment.js';
import { itemIdOf } from './item-id.js';
import type { ApiRecord, RecordBuilder } from './record-variant.js';

export function createTransactionBuilder(data: WorldData, gear: EquipmentBuilder): RecordBuilder {
  const { seed, extraFields, population } = data;
  const { table: transactions, tx } = data.transactions;
  const { userCountry, userMu, countryIds, muIds, partyIds, userId } = population;
  const itemRng = createRng(0);
  return (row): ApiRecord => {
    const ident = transactions.ident(row);
    const r = createRng(hash32(seed, STREAM.txBody, ident));
    const type = TRANSACTION_TYPES[tx.type.get(ident)] as string;
    const buyer = tx.buyer.get(ident);
    const seller = tx.seller.get(ident);
    const itemIdx = tx.item.get(ident);
    const code = itemIdx >= 0 ? (ITEM_CODES[itemIdx] as string) : undefined;
    const createdMs = transactions.time(row);
    const isEquipment = itemIdx >= EQUIPMENT_BASE;
    const quantity = isEquipment
      ? 1
      : code !== undefined && itemIdx >= CASE_BASE
        ? 1 + r.int(5)
        : 1 + r.int(500);
    const unitPrice = isEquipment ? r.float(5, 900) : r.float(0.05, 12);
    let money: number;
    switch (type) {
      case 'wage':
        money = round2(r.float(5, 80));
        break;
      case 'applicationFee':
        money = round2(r.float(1, 20));
        break;
      case 'donation':
      case 'articleTip':
        money = round2(r.float(1, 1000));
        break;
      case 'openCase':
      case 'craftItem':
      case 'dismantleItem':
      case 'battleLoot':
        money = 0;
        break;
      default:
        money = round2(quantity * unitPrice);
    }
    const single = seller < 0 && type !== 'donation';
    const rec: ApiRecord = { _id: transactions.oid(row), transactionType: type, money, quantity };
    if (seller >= 0) rec['sellerId'] = userId(seller);
    rec['buyerId'] = userId(buyer);
    if (code !== undefined) rec['itemCode'] = code;
    if (single || type === 'donation') rec['userId'] = userId(buyer);
    const mu = tx.mu.get(ident);
    if (mu >= 0) rec['muId'] = muIds[mu];
    const country = tx.country.get(ident);
    if (country >= 0) rec['countryId'] = countryIds[country];
    const party = tx.party.get(ident);
    if (party >= 0) rec['partyId'] = partyIds[party];
    // Equipment: the traded piece, or what a case gave (the outer itemCode stays the case: filters match it only).
    if (type === 'openCase') {
      const slot = EQUIPMENT_SLOTS[r.int(EQUIPMENT_SLOTS.length)] as (typeof EQUIPMENT_SLOTS)[number];
      const inner = r.pick(EQUIPMENT_CODES[slot]);
      rec['item'] = gear.piece(inner, undefined, itemIdOf(seed, 5, ident, 0), createdMs, itemRng);
    } else if (isEquipment && code !== undefined) {
      rec['item'] = gear.piece(code, undefined, itemIdOf(seed, 5, ident, 1), createdMs, itemRng);
    }
    if (type === 'trading' || type === 'itemMarket')
      rec['offerCreatedAt'] = isoString(createdMs - r.int(3 * DAY));
    rec['createdAt'] = isoString(createdMs);
    rec['updatedAt'] = isoString(createdMs);
    rec['__v'] = 0;
    if (extraFields) {
      const buyerMu = userMu.get(buyer);
      rec['buyerCountryId'] = countryIds[userCountry.get(buyer)];
      rec['buyerMuId'] = buyerMu >= 0 ? muIds[buyerMu] : null;
      rec['sellerCountryId'] = seller >= 0 ? countryIds[userCountry.get(seller)] : null;
      const sellerMu = seller >= 0 ? userMu.get(seller) : -1;
      rec['sellerMuId'] = sellerMu >= 0 ? muIds[sellerMu] : null;
    }
    return rec;
  };
}
