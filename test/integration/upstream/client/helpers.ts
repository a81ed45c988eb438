/** Shared helpers of the client integration tests: a simulator on port 0 and truth comparisons. */
import { startSimulator } from '../../../../tools/simulator/index.js';
import type { ClientOptions } from '../../../../src/upstream/client/index.js';
import { createClient } from '../../../../src/upstream/client/index.js';

export type Sim = Awaited<ReturnType<typeof startSimulator>>;

export const WORLD_NOW = Date.parse('2026-11-01T00:00:00.000Z');
export const H72 = 72 * 3_600_000;

export async function startSim(options: Parameters<typeof startSimulator>[0] = {}): Promise<Sim> {
  return startSimulator({ port: 0, scale: 'small', seed: 3, ...options });
}

/** A client with fast retries for tests. */
export function testClient(sim: Sim, options: Partial<ClientOptions> = {}): ReturnType<typeof createClient> {
  return createClient({
    baseUrl: sim.url,
    apiKey: 'test-key',
    retry: { initialMs: 5, maxMs: 50, retries: 5 },
    timeoutMs: 5_000,
    ...options,
  });
}

export type Rec = Record<string, unknown> & { _id: string };

export function truth(sim: Sim, resource: Parameters<Sim['truth']>[0]): Promise<Rec[]> {
  return Promise.resolve(sim.truth(resource) as unknown as Rec[]);
}

export function ids(records: readonly { _id?: unknown }[]): string[] {
  return records.map((r) => String(r._id));
}

export function timeOf(r: Record<string, unknown>, field = 'createdAt'): number {
  return Date.parse(String(r[field]));
}
