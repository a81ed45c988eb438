/**
 * Lands topics in Iceberg tables and checks the result: one Iceberg sink per resource (created or updated), then
 * the tables are read back through PyIceberg until each holds as many rows as its topic has committed records (the
 * sink appends every record: a changing resource's table is its history), then read once more after another commit
 * interval, so a late duplicate would show. For the demo and the bench: `ok` is false when a table differs.
 */
import type { ResourceName } from '../../foundation/models/index.js';
import { topicName } from '../../foundation/models/index.js';
import { readTopic } from '../kafka/readers/read-topic.js';
import { createIcebergConnectors, type CreateIcebergConnectorsOptions } from './create-iceberg-connectors.js';
import type { IcebergReader } from './iceberg-reader.js';
import { DEFAULT_ICEBERG_SINK_OPTIONS, icebergNamespace } from './iceberg-sink-config.js';
import { restartFailedSinks } from './restart-failed-sinks.js';
import { sleep } from '../../foundation/retry/index.js';

export interface LandInLakehouseOptions extends Omit<CreateIcebergConnectorsOptions, 'resources'> {
  brokers: string[];
  resources: readonly ResourceName[];
  reader: IcebergReader;
  /** Until every table holds its topic's records. @default 300000 */
  timeoutMs?: number;
}

export interface LakehouseTable {
  resource: ResourceName;
  topic: string;
  /** `<namespace>.<resource>` */
  table: string;
  /** Committed records on the topic. */
  records: number;
  /** Rows the table holds (PyIceberg's scan). */
  rows: number;
}

export interface LandInLakehouseReport {
  tables: LakehouseTable[];
  /** From the connectors' creation until every table held its topic's records. */
  seconds: number;
  rowsPerSecond: number;
  commitIntervalMs: number;
  /** Failed sink tasks restarted on the way (see restart-failed-sinks.ts). */
  restarts: string[];
  ok: boolean;
}

export async function landInLakehouse(options: LandInLakehouseOptions): Promise<LandInLakehouseReport> {
  const started = Date.now();
  const created = await createIcebergConnectors(options);
  const namespace = icebergNamespace(options.topicPrefix, options.namespace);
  const records = new Map<ResourceName, number>();
  for (const resource of options.resources)
    records.set(
      resource,
      await readTopic(
        { brokers: options.brokers, topic: topicName(options.topicPrefix, resource) },
        () => {},
      ),
    );
  const names = created.map((c) => c.resource);
  const deadline = started + (options.timeoutMs ?? 300_000);
  let counts: Record<string, number | null> = {};
  const restarts: string[] = [];
  for (;;) {
    restarts.push(
      ...(await restartFailedSinks(
        options.connect,
        created.map((c) => c.name),
      )),
    );
    counts = await options.reader.counts(namespace, names);
    if (names.every((r) => (counts[r] ?? 0) >= (records.get(r) ?? 0)) || Date.now() > deadline) break;
    await sleep(1000);
  }
  const seconds = (Date.now() - started) / 1000;
  const commitIntervalMs = options.commitIntervalMs ?? DEFAULT_ICEBERG_SINK_OPTIONS.commitIntervalMs;
  // one more commit interval: a record committed twice would show now
  await sleep(commitIntervalMs + 1000);
  counts = await options.reader.counts(namespace, names);
  const tables = names.map((resource) => ({
    resource,
    topic: topicName(options.topicPrefix, resource),
    table: `${namespace}.${resource}`,
    records: records.get(resource) ?? 0,
    rows: counts[resource] ?? 0,
  }));
  const rows = tables.reduce((n, t) => n + t.rows, 0);
  return {
    tables,
    seconds,
    rowsPerSecond: rows / Math.max(seconds, 0.001),
    commitIntervalMs,
    restarts,
    ok: tables.every((t) => t.rows === t.records),
  };
}

/** The report as lines of a table; `warehouseRows`: PostgreSQL's row count per resource, shown beside. */
export function formatLakehouseReport(
  report: LandInLakehouseReport,
  warehouseRows?: ReadonlyMap<ResourceName, number>,
): string[] {
  const pad = (s: string | number, n: number, right = false): string =>
    right ? String(s).padEnd(n) : String(s).padStart(n);
  const pgHead = warehouseRows === undefined ? '' : ` ${pad('postgres', 9)}`;
  const lines = [
    `${pad('topic', 34, true)} ${pad('records', 8)}  ${pad('iceberg table', 34, true)} ${pad('rows', 8)} ${pad('diff', 6)}${pgHead}`,
  ];
  for (const t of report.tables) {
    const pgRows = warehouseRows === undefined ? '' : ` ${pad(warehouseRows.get(t.resource) ?? '-', 9)}`;
    lines.push(
      `${pad(t.topic, 34, true)} ${pad(t.records, 8)}  ${pad(t.table, 34, true)} ${pad(t.rows, 8)} ${pad(t.rows - t.records, 6)}${pgRows}`,
    );
  }
  const rows = report.tables.reduce((n, t) => n + t.rows, 0);
  lines.push(
    `${rows} rows in Iceberg ${report.seconds.toFixed(1)} s after the sinks were created = ${report.rowsPerSecond.toFixed(0)} rows/s (commit interval ${report.commitIntervalMs} ms)`,
  );
  if (report.restarts.length > 0)
    lines.push(`failed sink tasks restarted on the way: ${report.restarts.join(', ')}`);
  if (warehouseRows !== undefined)
    lines.push(
      '(postgres holds one row per _id; Iceberg every version of a changing record: rows = records)',
    );
  lines.push(report.ok ? 'LAKEHOUSE: OK (every table = its topic)' : 'LAKEHOUSE: DIFFERENCES');
  return lines;
}
