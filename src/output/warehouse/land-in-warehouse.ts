/**
 * Lands topics in the warehouse and checks the result: one sink per resource (created or updated), wait until each
 * has consumed its topic, then count each table's rows beside the topic's records and distinct keys. For the demo
 * and for runbooks: `ok` is false when a table's row count differs from its topic's distinct `_id` count.
 */
import pg from 'pg';
import type { ResourceName } from '../../foundation/models/index.js';
import { topicName } from '../../foundation/models/index.js';
import { readTopic } from '../kafka/readers/read-topic.js';
import type { ConnectClient } from './connect-client.js';
import { createSinkConnectors } from './create-sink-connectors.js';
import type { ConnectorSecurity } from './sink-connector-config.js';
import { warehouseSchemaName } from './sink-connector-config.js';
import { waitForSinks } from './wait-for-sink.js';

export interface LandInWarehouseOptions {
  connect: ConnectClient;
  brokers: string[];
  topicPrefix: string;
  resources: readonly ResourceName[];
  /** The database as this process reaches it. */
  warehouseUrl: string;
  /** The database as Connect reaches it. @default warehouseUrl */
  connectWarehouseUrl?: string | undefined;
  /** Per connector. @default 300000 */
  timeoutMs?: number;
  /** How the connectors reach a secured Kafka / registry. @default none (the worker's settings) */
  security?: ConnectorSecurity | undefined;
}

export interface LandedTable {
  resource: ResourceName;
  topic: string;
  /** `<schema>.<resource>` */
  table: string;
  /** Messages on the topic (every version of a changing record). */
  records: number;
  /** Distinct keys (`_id`) on the topic: what the table should hold. */
  distinctIds: number;
  rows: number;
}

export interface LandInWarehouseReport {
  tables: LandedTable[];
  /** From the connectors' creation until every sink had consumed its topic. */
  seconds: number;
  /** Rows written per second over `seconds` (sum of the tables' rows). */
  rowsPerSecond: number;
  ok: boolean;
}

export async function landInWarehouse(options: LandInWarehouseOptions): Promise<LandInWarehouseReport> {
  const started = Date.now();
  const created = await createSinkConnectors({
    connect: options.connect,
    resources: options.resources,
    topicPrefix: options.topicPrefix,
    warehouseUrl: options.warehouseUrl,
    connectWarehouseUrl: options.connectWarehouseUrl,
    ...(options.security === undefined ? {} : { security: options.security }),
  });
  await waitForSinks(created, options);
  const seconds = (Date.now() - started) / 1000;
  const schema = warehouseSchemaName(options.topicPrefix);
  const db = new pg.Client({ connectionString: options.warehouseUrl });
  await db.connect();
  const tables: LandedTable[] = [];
  try {
    for (const resource of options.resources) {
      const topic = topicName(options.topicPrefix, resource);
      const keys = new Set<string>();
      const records = await readTopic({ brokers: options.brokers, topic }, (m) => {
        if (m.key !== null) keys.add(m.key.toString());
      });
      const result = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}"."${resource}"`,
      );
      tables.push({
        resource,
        topic,
        table: `${schema}.${resource}`,
        records,
        distinctIds: keys.size,
        rows: result.rows[0]?.n ?? 0,
      });
    }
  } finally {
    await db.end();
  }
  const rows = tables.reduce((n, t) => n + t.rows, 0);
  return {
    tables,
    seconds,
    rowsPerSecond: rows / Math.max(seconds, 0.001),
    ok: tables.every((t) => t.rows === t.distinctIds),
  };
}

/** The report as lines of a table (for the CLI). */
export function formatWarehouseReport(report: LandInWarehouseReport): string[] {
  const pad = (s: string | number, n: number, right = false): string =>
    right ? String(s).padEnd(n) : String(s).padStart(n);
  const lines = [
    `${pad('topic', 34, true)} ${pad('records', 8)} ${pad('ids', 8)}  ${pad('table', 34, true)} ${pad('rows', 8)} ${pad('diff', 6)}`,
  ];
  for (const t of report.tables) {
    lines.push(
      `${pad(t.topic, 34, true)} ${pad(t.records, 8)} ${pad(t.distinctIds, 8)}  ${pad(t.table, 34, true)} ${pad(t.rows, 8)} ${pad(t.rows - t.distinctIds, 6)}`,
    );
  }
  const rows = report.tables.reduce((n, t) => n + t.rows, 0);
  lines.push(
    `${rows} rows in PostgreSQL ${report.seconds.toFixed(1)} s after the sinks were created = ${report.rowsPerSecond.toFixed(0)} rows/s`,
  );
  lines.push(report.ok ? 'WAREHOUSE: OK (every table = its topic)' : 'WAREHOUSE: DIFFERENCES');
  return lines;
}
