/**
 * What a run id may be (issue 48, item 6): it is part of every slice's job id, of the exactly-once page keys
 * (`<slice>|<seq>|...`, so a `|` broke every page key) and of the `--replay` seen-set scopes (`.../<runId>`, so a `/`
 * broke them), and BullMQ reads `:` as its key separator. The ids the planner makes (`runJobId`) always match.
 */
import { ConfigError } from '../../foundation/errors/index.js';

/** Letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128 characters. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * `id` when it is a valid run id.
 * @param what how the error names it (the CLI passes `--run-id`). @default 'runId'
 * @throws ConfigError in one line naming the rule and the value.
 */
export function checkRunId(id: string, what = 'runId'): string {
  if (!RUN_ID_PATTERN.test(id))
    throw new ConfigError(
      `${what} must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit (${RUN_ID_PATTERN.source}), got ${JSON.stringify(id)}`,
      [what],
    );
  return id;
}
