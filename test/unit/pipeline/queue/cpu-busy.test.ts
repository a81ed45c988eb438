/**
 * How busy the worker was for slot sizing: the larger of its event loop's utilization and its machine's busy CPU
 * share, each read covering the time since the last.
 */
import { describe, expect, it } from 'vitest';
import { startCpuBusy, type CpuTimes } from '../../../../src/pipeline/queue/cpu-busy.js';

/** A machine whose CPU times advance by `idle` of `total` ms between two reads. */
function machine(idle: number, total: number): () => CpuTimes {
  const t = { idle: 0, total: 0 };
  return () => {
    const now = { ...t };
    t.idle += idle;
    t.total += total;
    return now;
  };
}

describe('startCpuBusy', () => {
  it('reads ~1 after the loop was blocked, whatever the machine', () => {
    const busy = startCpuBusy(machine(100, 100));
    busy.read();
    const until = Date.now() + 200;
    while (Date.now() < until) {
      // blocked: no idle wait at all
    }
    expect(busy.read()).toBeGreaterThan(0.9);
  });

  it("reads the machine's busy share while the loop waits: idle machine < 0.5, a crowded one 0.9", async () => {
    const idle = startCpuBusy(machine(100, 100));
    idle.read();
    await new Promise((r) => setTimeout(r, 200));
    expect(idle.read()).toBeLessThan(0.5);
    const crowded = startCpuBusy(machine(10, 100));
    crowded.read();
    await new Promise((r) => setTimeout(r, 200));
    expect(crowded.read()).toBeCloseTo(0.9, 5);
  });

  it('peek reads the share since the last read without starting a new interval', async () => {
    // The machine's busy share: 10 % for 3 reads, then 90 %.
    const steps = [10, 10, 10, 90];
    const t = { idle: 0, total: 0 };
    const busy = startCpuBusy(() => {
      const now = { ...t };
      const b = steps.shift() ?? 90;
      t.idle += 100 - b;
      t.total += 100;
      return now;
    });
    await new Promise((r) => setTimeout(r, 50));
    const first = busy.peek();
    const second = busy.peek(); // the same interval, longer: still the 10 % machine (the loop idle meanwhile)
    expect(first).toBeCloseTo(0.1, 1);
    expect(second).toBeCloseTo(0.1, 1);
    expect(busy.read()).toBeCloseTo(0.1, 1); // read ends the interval
    await new Promise((r) => setTimeout(r, 50));
    expect(busy.peek()).toBeCloseTo(0.9, 1); // a new interval: the 90 % step only
  });

  it('reads the real machine within 0..1', () => {
    const busy = startCpuBusy();
    const x = busy.read();
    expect(x).toBeGreaterThanOrEqual(0);
    expect(x).toBeLessThanOrEqual(1);
  });
});
