/** Renders a {@link StatusReport} as the plain-text screen of `gamedata status`. */
import { formatDuration } from '../../foundation/config/index.js';
import type { StatusReport } from './collect-status.js';
import { formatPartition } from './partition-status.js';
import { formatKeySpent, formatRunKeyTime } from './key-time.js';
import { formatDriftRecord } from '../../pipeline/drift/index.js';

const n = (x: number): string => x.toLocaleString('en-US');

/** Formats the report (no colours: it goes to logs and terminals alike). */
export function formatStatus(r: StatusReport): string {
  const lines: string[] = [];
  const rec = r.records;
  lines.push(`status at ${r.at}`);
  lines.push(
    `runs: ${n(r.runs.total)} (${n(r.runs.running)} running, ${n(r.runs.completed)} completed, ${n(r.runs.failed)} failed)`,
  );
  lines.push(
    `slices: ${n(r.slices.completed)} done, ${n(r.slices.active)} active, ${n(r.slices.waiting)} waiting, ${n(r.slices.delayed)} delayed (retrying), ${n(r.slices.failed)} failed`,
  );
  lines.push(
    `records: ${n(rec.fetched)} fetched, ${n(rec.published)} published, ${n(rec.deduplicated)} deduplicated, ${n(rec.deadLettered)} dead-lettered`,
  );
  for (const [resource, c] of Object.entries(r.byResource)) {
    lines.push(
      `  ${resource.padEnd(13)} ${n(c.fetched)} fetched, ${n(c.published)} published, ${n(c.deduplicated)} deduplicated, ${n(c.deadLettered)} dead-lettered`,
    );
  }
  if (r.tails.length > 0) {
    lines.push('tails:');
    for (const t of r.tails) {
      const sched = t.schedules
        .map((s) =>
          s.kind === 'tail'
            ? `tail every ${formatDuration(s.every ?? Number.NaN)}`
            : `backfill cron "${s.pattern ?? '?'}"`,
        )
        .join(', ');
      lines.push(
        `  ${t.resource.padEnd(13)} lag ${t.lagSeconds === undefined ? '-' : formatDuration(t.lagSeconds * 1000)}, watermark ${t.watermark ?? '-'}` +
          `${t.activeRunId === undefined ? '' : `, running ${t.activeRunId}`}, ${t.completedRuns} runs done, ${t.failedRuns} failed, ${t.skippedTicks} ticks skipped` +
          `${sched === '' ? ', no schedule' : `; ${sched}`}${t.lastError === undefined ? '' : `; last error: ${t.lastError}`}`,
      );
    }
  }
  lines.push(...formatGaps(r.gaps));
  const rl = r.upstream.rateLimit;
  lines.push(
    `upstream rate limit: ${rl.remaining === undefined ? 'not seen yet' : `${n(rl.remaining)} of ${rl.limit === undefined ? '?' : n(rl.limit)} left (${rl.headroom === undefined ? '?' : `${Math.round(rl.headroom * 100)}%`} headroom)${rl.resetAt === undefined ? '' : `, resets ${rl.resetAt}`}`}`,
  );
  for (const b of r.upstream.budgets) {
    const w = b.waiting;
    lines.push(
      `upstream budget (key ${b.key}): ${b.remaining === undefined ? '?' : n(b.remaining)} of ${b.limit === undefined ? '?' : n(b.limit)} left` +
        `${b.resetAt === undefined ? '' : ` until ${new Date(b.resetAt).toISOString()}`}${b.pauseUntil > 0 ? `, paused after a 429 until ${new Date(b.pauseUntil).toISOString()}` : ''}; ` +
        `${n(b.requests)} requests carried ${n(b.slots)} procedures (${b.proceduresPerRequest.toFixed(1)} per request), ${n(b.status429)} answered 429; ` +
        `waiting: feed-tail ${n(w['feed-tail'])}, resource-tail ${n(w['resource-tail'])}, backfill ${n(w.backfill)}, rescan ${n(w.rescan)}; ` +
        `fetcher ${b.leader ?? 'none'}`,
    );
    lines.push(`  ${formatKeySpent(b)}`);
  }
  if (r.drift.length > 0) {
    lines.push('schema drift (see `gamedata schemas drift`):');
    for (const d of r.drift) {
      lines.push(
        `  ${d.resource}${d.dropped > 0 ? ` (${n(d.dropped)} more occurrences over the path bound)` : ''}`,
      );
      for (const record of d.records) {
        const evolved = d.evolved?.[record.path];
        lines.push(
          `    ${formatDriftRecord(record)}${evolved === undefined ? '' : `; absorbed: a field of ${evolved.subject} from schema id ${evolved.id}`}`,
        );
      }
    }
  }
  lines.push(`workers: ${r.workers.length}`);
  for (const w of r.workers) lines.push(`  ${w.id} ${w.metricsUrl ?? '(no /metrics)'}`);
  if (r.metrics !== undefined) {
    const m = r.metrics.records;
    lines.push(
      `  their /metrics (${r.metrics.scraped} scraped${r.metrics.unreachable.length > 0 ? `, ${r.metrics.unreachable.length} unreachable` : ''}): ` +
        `${n(m.fetched)} fetched, ${n(m.published)} published, ${n(m.deduplicated)} deduplicated, ${n(m.deadLettered)} dead-lettered, ${n(r.metrics.pages)} pages, ${n(r.metrics.httpRequests)} HTTP requests`,
    );
  }
  if (r.runs.recent.length > 0) {
    lines.push('recent runs:');
    for (const run of r.runs.recent) {
      const c = run.counters;
      const slices =
        run.slices === undefined
          ? `${run.planned} slices`
          : `${run.slices.completed}/${run.slices.completed + run.slices.pending} slices`;
      lines.push(
        `  ${run.runId} ${run.state} ${new Date(run.at).toISOString()} ${slices}: ${n(c.fetched)} fetched, ${n(c.published)} published, ${n(c.deduplicated)} dup, ${n(c.deadLettered)} dlq${run.reason === undefined ? '' : ` (${run.reason})`}`,
      );
      if (run.partition !== undefined) lines.push(`    ${formatPartition(run.partition)}`);
      if (run.keyTime !== undefined) lines.push(`    ${formatRunKeyTime(run.keyTime, run.slices)}`);
    }
  }
  return lines.join('\n');
}

/** The ranges tails could not read (issue 48), one line each, with the command that reads one again. */
export function formatGaps(gaps: StatusReport['gaps']): string[] {
  if (gaps.length === 0) return [];
  const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
  return [
    `gaps (${String(gaps.length)} range${gaps.length === 1 ? '' : 's'} a tail could not read; \`gamedata backfill <resource> --since <from> --until <to>\` reads one again and closes it):`,
    ...gaps.map((g) => {
      const filters = Object.entries(g.filters)
        .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
        .join(',');
      return (
        `  ${g.resource.padEnd(13)} from ${iso(g.start)} to ${iso(g.end)}${filters === '' ? '' : ` (${filters})`}` +
        `, run ${g.runId}: ${g.reason}`
      );
    }),
  ];
}
