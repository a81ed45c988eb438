/** The worker's line for a change of its slots: why, with the batch and how busy the CPU was when it was decided. */
import { describe, expect, it } from 'vitest';
import { concurrencyLine } from '../../../../src/app/cli/worker-slices.js';

const demand = { at: 1, binds: false, calls: 12, maxBatch: 50, tail: false, queued: 524, chains: 500 };

describe('concurrencyLine', () => {
  it('names the reason of each change', () => {
    expect(concurrencyLine({ from: 32, to: 64, reason: 'spare', demand, busy: 0.314 })).toBe(
      'worker: 64 slices at once (was 32): the key has requests to spare and 524 slices wait, CPU 31 % busy',
    );
    expect(
      concurrencyLine({ from: 8, to: 16, reason: 'short', demand: { ...demand, binds: true, calls: 3 } }),
    ).toBe('worker: 16 slices at once (was 8): the key binds and POSTs leave with 3 of 50 calls');
    expect(
      concurrencyLine({ from: 64, to: 128, reason: 'chains', demand: { ...demand, binds: true, calls: 50 } }),
    ).toBe(
      "worker: 128 slices at once (was 64): 524 slices wait and the key's full POSTs go below its rate (500 chains would spend it)",
    );
    expect(concurrencyLine({ from: 64, to: 16, reason: 'free', demand: undefined })).toBe(
      'worker: 16 slices at once (was 64): no batch sent lately',
    );
    expect(concurrencyLine({ from: 64, to: 32, reason: 'free', demand: { ...demand, queued: 0 } })).toBe(
      'worker: 32 slices at once (was 64): the key does not bind and no slice waits for a slot',
    );
  });
});
