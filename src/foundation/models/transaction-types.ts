/**
 * Transaction types the real service is seen to emit (upstream-facts.md), in one list: the simulator generates them
 * (its weights follow this order) and the planner's partition proof knows them.
 */
export const TRANSACTION_TYPES = [
  'applicationFee',
  'trading',
  'itemMarket',
  'wage',
  'donation',
  'articleTip',
  'openCase',
  'craftItem',
  'dismantleItem',
  'battleLoot',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
