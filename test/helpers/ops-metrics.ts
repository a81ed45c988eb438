/**
 * The metric names the operations files use (ops/prometheus alert rules, ops/grafana dashboard queries), and the
 * names a `/metrics` exposition declares, for tests that check the first are among the second.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ALERT_RULES = `${ROOT}ops/prometheus/gamedata-alerts.yml`;
export const ALERT_RULE_TESTS = `${ROOT}ops/prometheus/gamedata-alerts.test.yml`;
export const DASHBOARD = `${ROOT}ops/grafana/gamedata-dashboard.json`;

const METRIC = /\bgamedata_[a-z0-9_]+\b/g;

/** Every `gamedata_*` name in the alert rules (expressions; the annotations name none). */
export function alertRuleMetrics(): Set<string> {
  return new Set(readFileSync(ALERT_RULES, 'utf8').match(METRIC) ?? []);
}

interface DashboardPanel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

/** Every query of the dashboard (panels in rows included). */
export function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: DashboardPanel[] };
  const walk = (panels: DashboardPanel[]): string[] =>
    panels.flatMap((p) => [...(p.targets ?? []).map((t) => t.expr ?? ''), ...walk(p.panels ?? [])]);
  return walk(dashboard.panels);
}

/** Every `gamedata_*` name in the dashboard's queries. */
export function dashboardMetrics(): Set<string> {
  return new Set(dashboardQueries().flatMap((q) => q.match(METRIC) ?? []));
}

/**
 * The series names an exposition declares (`# TYPE` lines), with a histogram's `_bucket`, `_sum` and `_count`.
 * A labelled metric is declared before it has a value, so this does not depend on what the worker did so far.
 */
export function exposedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)/.exec(line);
    if (m === null) continue;
    const [, name = '', type] = m;
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** The names used but not declared. */
export function missingFrom(used: Iterable<string>, declared: Set<string>): string[] {
  return [...used].filter((n) => !declared.has(n)).sort();
}
