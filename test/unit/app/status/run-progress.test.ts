/**
 * `backfill --wait`'s follower (`waitForRunWithProgress`): it reads the run's state every `checkMs` and redraws every
 * `pollMs`, so it returns soon after the run ends (issue 32: a small full history's wall time ended up to a whole
 * second after its run, at every run). Fakes for the run's state and counters; no Redis.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../../../src/pipeline/queue/index.js';
import { waitForRunWithProgress } from '../../../../src/app/status/index.js';

const figures = { fetched: 10, published: 8, deduplicated: 2, deadLettered: 0 };

/** A run that is active for `activeReads` reads of its state, then completed. */
function fakeRun(activeReads: number) {
  let reads = 0;
  const status = (): Promise<RunStatus> => {
    reads += 1;
    return Promise.resolve(
      reads <= activeReads
        ? { state: 'active', slices: { completed: 0, pending: 2 } }
        : {
            state: 'completed',
            result: { runId: 'r', slices: 2, counters: figures } as never,
            slices: { completed: 2, pending: 0 },
          },
    );
  };
  return { status, reads: () => reads };
}

describe('waitForRunWithProgress', () => {
  it('sees the end within checkMs, not pollMs, and redraws only every pollMs', async () => {
    const run = fakeRun(5);
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const t0 = Date.now();
    const result = await waitForRunWithProgress('r', {
      redis: {} as never,
      stream: out,
      bars: false,
      pollMs: 10_000,
      checkMs: 20,
      readStatus: run.status,
      readCounters: () => Promise.resolve(figures as never),
    });
    const took = Date.now() - t0;
    expect(result).toMatchObject({ runId: 'r' });
    // Five active reads 20 ms apart, then the end: well under one pollMs.
    expect(run.reads()).toBe(6);
    expect(took).toBeLessThan(2_000);
    // Drawn twice: at the first read and at the end (the state changed), not at every read.
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^active: 0\/2 slices/);
    expect(lines[1]).toMatch(/^completed: 2\/2 slices/);
  });

  it('a failed run rejects at its first read after the failure', async () => {
    let reads = 0;
    await expect(
      waitForRunWithProgress('r', {
        redis: {} as never,
        stream: new PassThrough(),
        bars: false,
        pollMs: 10_000,
        checkMs: 5,
        readStatus: () =>
          Promise.resolve(
            (reads += 1) < 3
              ? { state: 'active', slices: { completed: 0, pending: 1 } }
              : { state: 'failed', failedReason: 'boom', slices: { completed: 0, pending: 1 } },
          ),
        readCounters: () => Promise.resolve(figures as never),
      }),
    ).rejects.toThrow(/run r failed: boom/);
    expect(reads).toBe(3);
  });
});
