/**
 * Reads Iceberg tables back through PyIceberg (scripts/lakehouse/read_iceberg.py in the venv that
 * `scripts/stack.sh up --with lakehouse` creates): row counts, rows and snapshots, as JSON. The catalog settings go
 * to the script in its environment (ICEBERG_CATALOG_URI, ICEBERG_WAREHOUSE, ICEBERG_CATALOG_NAME).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../../foundation/errors/index.js';

export interface IcebergReaderOptions {
  /** A Python with pyiceberg[sql-postgres,pyarrow] (ICEBERG_PYTHON). */
  python: string;
  /** SQLAlchemy URL of the catalog database (ICEBERG_CATALOG_URI). */
  catalogUri: string;
  /** ICEBERG_WAREHOUSE */
  warehouse: string;
  /** @default 'gamedata' */
  catalogName?: string | undefined;
  /** The reader script. @default the repository's scripts/lakehouse/read_iceberg.py */
  script?: string;
}

export interface IcebergSnapshot {
  id: number;
  timestamp_ms: number;
  summary: Record<string, string>;
}

export interface IcebergReader {
  /** Rows per table; null for a table that does not exist (yet). */
  counts(namespace: string, tables: readonly string[]): Promise<Record<string, number | null>>;
  /** Every row (timestamps as epoch ms, structs as objects, maps as objects). */
  rows(table: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }>;
  snapshots(table: string): Promise<IcebergSnapshot[]>;
  /** The latest version per `_id` (docs/consuming.md's query, run by DuckDB over the PyIceberg scan). */
  latest(table: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }>;
  /** Drops the namespace's tables from the catalog (their files stay) and the namespace; the tables dropped. */
  drop(namespace: string): Promise<string[]>;
}

const DEFAULT_SCRIPT = fileURLToPath(new URL('../../../scripts/lakehouse/read_iceberg.py', import.meta.url));

export function createIcebergReader(options: IcebergReaderOptions): IcebergReader {
  const run = (args: string[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      execFile(
        options.python,
        [options.script ?? DEFAULT_SCRIPT, ...args],
        {
          env: {
            ...process.env,
            ICEBERG_CATALOG_URI: options.catalogUri,
            ICEBERG_WAREHOUSE: options.warehouse,
            ICEBERG_CATALOG_NAME: options.catalogName ?? 'gamedata',
          },
          maxBuffer: 1 << 30,
        },
        (err, stdout, stderr) => {
          if (err !== null) {
            reject(
              new ServiceError(
                `PyIceberg (${options.python}) ${args.join(' ')} failed: ${stderr.trim().split('\n').slice(-3).join(' | ') || err.message}`,
                'iceberg',
              ),
            );
            return;
          }
          resolve(JSON.parse(stdout) as unknown);
        },
      );
    });
  return {
    counts: async (namespace, tables) =>
      (await run(['counts', namespace, ...tables])) as Record<string, number | null>,
    rows: async (table) =>
      (await run(['rows', table])) as { columns: string[]; rows: Record<string, unknown>[] },
    snapshots: async (table) => (await run(['snapshots', table])) as IcebergSnapshot[],
    latest: async (table) =>
      (await run(['latest', table])) as { columns: string[]; rows: Record<string, unknown>[] },
    drop: async (namespace) => (await run(['drop', namespace])) as string[],
  };
}
