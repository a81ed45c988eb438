/**
 * The schedules' planning lock on real Redis (schedules/renewed-lock.ts): held past its TTL while the holder lives
 * (renewed), and free within the TTL once the holder is gone (its connection dropped, as a SIGKILLed tick's is), so a
 * killed tick stops its tail for seconds, not for the 120 s the tail chaos run measured before.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { takeRenewedLock } from '../../../../src/pipeline/schedules/renewed-lock.js';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
const control = new Redis(url, { maxRetriesPerRequest: null });
const key = `it-renewed-lock-${randomUUID().slice(0, 8)}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

afterAll(async () => {
  await control.del(key);
  await control.quit();
});

describe('a renewed lock', () => {
  it('stays held past its TTL while its holder lives, and lapses within the TTL once the holder is gone', async () => {
    const holder = new Redis(url, { maxRetriesPerRequest: null });
    const release = await takeRenewedLock(holder, key, 300);
    expect(release).toBeDefined();
    // Three TTLs later it is still held: nobody else takes it.
    await sleep(900);
    expect(await takeRenewedLock(control, key, 300)).toBeUndefined();
    expect(Number(await control.pttl(key))).toBeGreaterThan(0);

    // The holder dies (no release, no more renewals): the lock is free within the TTL.
    holder.disconnect();
    const gone = Date.now();
    let next: (() => Promise<void>) | undefined;
    while (next === undefined && Date.now() - gone < 2_000) {
      next = await takeRenewedLock(control, key, 300);
      if (next === undefined) await sleep(20);
    }
    expect(next).toBeDefined();
    expect(Date.now() - gone).toBeLessThan(400);

    // Released by its token: free at once; an old holder's late release does not free the new one's.
    await next?.();
    expect(await control.exists(key)).toBe(0);
    const third = await takeRenewedLock(control, key, 300);
    await release?.().catch(() => undefined); // the dead holder's connection: nothing to release
    expect(await control.exists(key)).toBe(1);
    await third?.();
  });
});
