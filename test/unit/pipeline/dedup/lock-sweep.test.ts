import { describe, expect, it } from 'vitest';
import {
  createMemoryPendingMarks,
  createPendingMarks,
  pageKeyOf,
} from '../../../../src/pipeline/dedup/index.js';
import { modelId } from './pending-marks-model.js';

const tx = (n: number): { _id: string } => ({ _id: modelId(n) });
const never = (): Promise<boolean> => Promise.reject(new Error('no page should need resolving'));

function setup() {
  const clock = { t: 1_000_000 };
  const backend = createMemoryPendingMarks({ now: () => clock.t });
  const marks = createPendingMarks(backend, { prefix: 't', leaseMs: 1000, pollMs: 1 });
  return { clock, backend, marks };
}

describe('sweep of orphaned locks (issue 47)', () => {
  it('settles each lock past its lease plus the grace by its page fate, once per page, and leaves the rest', async () => {
    const { clock, backend, marks } = setup();
    // Pages that were claimed and never settled: A committed, B did not, C is live in this process.
    await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1), tx(2)], never);
    await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(3)], never);
    await marks.claim(pageKeyOf('C', 0), 'transactions', [tx(4)], never);
    clock.t += 1000 + 5000;
    // D's lease expired, but not by the grace yet: no claim has had its chance, the sweep leaves it unread.
    await marks.claim(pageKeyOf('D', 0), 'transactions', [tx(5)], never);
    clock.t += 2000;
    const asked: string[] = [];
    const fates: Record<string, boolean | 'live'> = { 'A#0': true, 'B#0': false, 'C#0': 'live' };
    const resolve = (pageKey: string): Promise<boolean | 'live'> => {
      asked.push(pageKey);
      const fate = fates[pageKey];
      return fate === undefined ? Promise.reject(new Error(`asked for ${pageKey}`)) : Promise.resolve(fate);
    };
    const report = await marks.sweep(resolve, { graceMs: 4000 });
    expect(report).toEqual({ scanned: 5, expired: 4, committed: 2, released: 1, left: 1 });
    // One resolve per page, not per lock.
    expect(asked.sort()).toEqual(['A#0', 'B#0', 'C#0']);
    expect([...backend.locks.keys()].sort()).toEqual([
      `t:lock:transactions/${modelId(4)}`,
      `t:lock:transactions/${modelId(5)}`,
    ]);
    // A's ids are seen (it committed), B's are not (it did not): a new page publishes 3, not 1 or 2.
    const after = await marks.claim(pageKeyOf('E', 0), 'transactions', [tx(1), tx(2), tx(3)], never);
    expect(after.fresh).toEqual([tx(3)]);
  });

  it('a scoped (replay) lock is marked in the global and the run-scoped set', async () => {
    const { clock, marks } = setup();
    await marks.claim(pageKeyOf('R', 0), 'transactions', [tx(7)], never, { scope: 'run1' });
    clock.t += 10_000;
    const report = await marks.sweep(() => Promise.resolve(true), { graceMs: 1000 });
    expect(report).toMatchObject({ expired: 1, committed: 1 });
    expect((await marks.claim(pageKeyOf('S', 0), 'transactions', [tx(7)], never)).fresh).toEqual([]);
    expect(
      (await marks.claim(pageKeyOf('T', 0), 'transactions', [tx(7)], never, { scope: 'run1' })).fresh,
    ).toEqual([]);
  });

  it('a lock taken over by another page meanwhile is not deleted (compare-and-delete by page key)', async () => {
    const { clock, backend, marks } = setup();
    await marks.claim(pageKeyOf('A', 0), 'transactions', [tx(1)], never);
    clock.t += 10_000;
    // While the sweep resolves A, page B resolves it too (a claim) and takes the lock.
    const report = await marks.sweep(
      async () => {
        await marks.claim(pageKeyOf('B', 0), 'transactions', [tx(1)], () => Promise.resolve(false));
        return false;
      },
      { graceMs: 1000 },
    );
    expect(report).toMatchObject({ expired: 1, released: 1 });
    expect([...backend.locks.values()][0]).toMatch(/^B#0\|/);
  });
});
