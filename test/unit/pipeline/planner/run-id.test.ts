/** Issue 48, item 6: run ids are checked against RUN_ID_PATTERN, in one line; the planner's own ids always pass. */
import { describe, expect, it } from 'vitest';
import { checkRunId, RUN_ID_PATTERN } from '../../../../src/pipeline/contract/run-id.js';
import { runJobId } from '../../../../src/pipeline/contract/queue-names.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

describe('checkRunId', () => {
  it.each(['nightly-2026-12-01', 'a', 'run_1.b', 'X'.repeat(128)])('accepts %s', (id) => {
    expect(checkRunId(id)).toBe(id);
  });

  it.each(['a|b', 'team/nightly', 'a:b', '', '-lead', '.hidden', 'with space', 'X'.repeat(129), 'é'])(
    'refuses %j in one line naming the flag',
    (id) => {
      let error: unknown;
      try {
        checkRunId(id, '--run-id');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toContain(`--run-id must be`);
      expect(message).toContain(JSON.stringify(id));
      expect(message).not.toContain('\n');
    },
  );

  it("the planner's run ids match the pattern", () => {
    for (const resources of ['donations', 'donations+parties', 'articles+transactions+users'])
      for (const tag of ['full', 'range'])
        expect(runJobId(resources, tag, 1_796_182_522_268)).toMatch(RUN_ID_PATTERN);
  });
});
