/**
 * Dead letters after the fact (issue 48, item 8): `replayDeadLetters` reads a resource's `<topic>.dlq`, checks each
 * dead letter again (read by id from the upstream where the spec has such a read, else its stored copy against today's
 * schema) and republishes, exactly once over any number of replays, those that now encode.
 */
export {
  replayDeadLetters,
  formatDlqReplay,
  dlqReplayRunId,
  DLQ_STORED_COPY_OPERATION,
} from './replay-dead-letters.js';
export type { ReplayDeadLettersOptions, DlqReplayReport } from './replay-dead-letters.js';
export { parseDeadLetter, recheckDeadLetters, READ_BY_ID } from './dead-letter-recheck.js';
export type { DeadLetter, LeftReason, RecheckDeps, RecheckOutcome } from './dead-letter-recheck.js';
