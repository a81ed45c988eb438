/**
 * The alert rules pass `promtool check rules` and their own unit tests (`promtool test rules`, Debian's prometheus
 * package; scripts/ensure-deps.sh installs it under CI, where this test must not skip), and every metric the rules
 * and the dashboard name is one the worker's metrics registry declares. The same names against a live worker's
 * scrape: test/integration/ops/exported-metrics.test.ts.
 */
import { execFile, execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createPipelineMetrics } from '../../../src/foundation/metrics/index.js';
import {
  ALERT_RULE_TESTS,
  ALERT_RULES,
  alertRuleMetrics,
  dashboardMetrics,
  dashboardQueries,
  exposedNames,
  missingFrom,
} from '../../helpers/ops-metrics.js';

const run = promisify(execFile);

function hasPromtool(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const promtool = hasPromtool();

describe('alert rules and dashboard', () => {
  it('CI has promtool (the rules tests below must run there)', () => {
    if (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false')
      expect(promtool, 'promtool missing under CI: scripts/ensure-deps.sh installs Debian prometheus').toBe(
        true,
      );
  });

  it.skipIf(!promtool)('promtool check rules and promtool test rules pass', async () => {
    const check = await run('promtool', ['check', 'rules', ALERT_RULES]);
    expect(check.stdout).toMatch(/SUCCESS: 10 rules found/);
    const tests = await run('promtool', ['test', 'rules', ALERT_RULE_TESTS], {
      cwd: dirname(ALERT_RULE_TESTS),
    });
    expect(tests.stdout).toMatch(/SUCCESS/);
  });

  it('every metric the rules and the dashboard name is declared by the worker metrics', async () => {
    const declared = exposedNames(await createPipelineMetrics().render());
    const rules = alertRuleMetrics();
    const dashboard = dashboardMetrics();
    expect(rules.size).toBeGreaterThanOrEqual(10);
    expect(dashboard.size).toBeGreaterThanOrEqual(20);
    expect(missingFrom(rules, declared)).toEqual([]);
    expect(missingFrom(dashboard, declared)).toEqual([]);
    // Every panel queries something (an empty expr would show "no data" forever).
    expect(dashboardQueries().every((q) => /gamedata_/.test(q))).toBe(true);
  });

  it('catches a name the worker does not export', () => {
    const declared = exposedNames(
      '# TYPE gamedata_pages_total counter\n# TYPE gamedata_batch_size histogram\n',
    );
    expect(
      missingFrom(['gamedata_pages_total', 'gamedata_batch_size_bucket', 'gamedata_pages'], declared),
    ).toEqual(['gamedata_pages']);
  });
});
