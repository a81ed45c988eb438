/**
 * Creates the PostgreSQL schema the sink writes into (Debezium's JDBC sink creates tables, not schemas).
 * Idempotent: `CREATE SCHEMA IF NOT EXISTS`.
 */
import pg from 'pg';
import { GamedataError, ServiceError } from '../../foundation/errors/index.js';

/** @throws ServiceError('postgres') when the database cannot be reached or refuses. */
export async function ensureWarehouseSchema(warehouseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: warehouseUrl, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '""')}"`);
  } catch (error) {
    throw new ServiceError(
      `could not create schema ${schema} in the warehouse: ${GamedataError.from(error).message}`,
      'postgres',
      { cause: error, retriable: true },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
