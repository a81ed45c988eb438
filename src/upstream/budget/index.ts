/**
 * One upstream budget per API key, shared by every worker process through Redis (see docs/ARCHITECTURE.md,
 * "Upstream budget").
 */
export { createSharedBudget, DEFAULT_SHARED_BUDGET_OPTIONS } from './shared-budget.js';
export type { SharedBudget, SharedBudgetOptions, BatchInfo } from './shared-budget.js';
export { readBudgetSnapshot, findBudgetBases, proceduresPerRequest } from './budget-snapshot.js';
export type { BudgetSnapshot } from './budget-snapshot.js';
export {
  CALL_PRIORITIES,
  priorityRank,
  queuePriority,
  runWithPriority,
  currentPriority,
} from './priority.js';
export type { CallPriority } from './priority.js';
export { budgetKeys, budgetKeysOfBase, hashApiKey } from './budget-keys.js';
export type { BudgetKeys } from './budget-keys.js';
export {
  budgetBinds,
  budgetBindsAhead,
  completeRequest,
  initialTokenBudget,
  startRequest,
  tokensAhead,
  tokensLeft,
  waitBeforeRequest,
} from './token-budget.js';
export type { TokenBudgetState, TokenBudgetOptions, BudgetObservation } from './token-budget.js';
export { decideSend } from './send-decision.js';
export {
  decideConcurrency,
  encodeBudgetDemand,
  isShortBatch,
  keyHasSpare,
  parseBudgetDemand,
  FULL_BATCH_GROWTH_LATENCY_MS,
} from './concurrency-decision.js';
export type {
  BudgetDemand,
  ConcurrencyDecision,
  ConcurrencyInput,
  ConcurrencyReason,
} from './concurrency-decision.js';
export { workBinds, workFill } from './work-binds.js';
export type { WorkFillInput } from './work-binds.js';
export { createWorkEstimator, DEFAULT_WORK_ESTIMATOR_OPTIONS } from './work-estimate.js';
export type {
  SliceCounts,
  WorkEstimate,
  WorkEstimator,
  WorkEstimatorOptions,
  WorkSource,
} from './work-estimate.js';
export type { SendDecision, SendInput } from './send-decision.js';
export { selectBatch, groupIdentical } from './select-batch.js';
