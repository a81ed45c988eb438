/**
 * Issue 48, item 4: answers are read with a byte cap. The simulator's `oversize` fault answers 200 with a 2 MiB body
 * (no content-length); a client capped at 256 KiB refuses it, in one line naming the cap, as it arrives; with the fault
 * off the same call is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../../src/upstream/client/index.js';
import { startSimulator, type Simulator } from '../../../../tools/simulator/index.js';
import { UpstreamError } from '../../../../src/foundation/errors/index.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    scale: 'small',
    seed: 2,
    rateLimit: { enabled: false },
    faults: { oversize: 1, oversizeBytes: 2 * 1024 * 1024 },
  });
});
afterAll(async () => {
  await sim.close();
});

describe('the byte cap on answers', () => {
  it('an answer over maxResponseBytes is a retriable UpstreamError naming the cap', async () => {
    const client = createClient({
      baseUrl: sim.url,
      apiKey: 'k',
      cache: false,
      maxResponseBytes: 256 * 1024,
      retry: { retries: 0 },
    });
    const error = await client.call('donation.getManyPaginated', { limit: 10 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).retriable).toBe(true);
    expect((error as Error).message).toMatch(
      /answer of more than 262144 bytes is over the cap of 262144 \(maxResponseBytes, GAMEDATA_MAX_RESPONSE_BYTES\)$/,
    );
    sim.configure({ faults: { oversize: 0 } });
    const page = (await client.call('donation.getManyPaginated', { limit: 10 })) as { items: unknown[] };
    expect(page.items).toHaveLength(10);
  });
});
