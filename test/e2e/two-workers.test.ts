/**
 * Two `gamedata worker` PROCESSES share a full-history transaction backfill. Every trade is read twice (under its
 * buyer and its seller), often by different processes at the same moment; the cross-process in-flight locks of
 * the dedup store keep each trade published once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './pipeline-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function startWorker(h: Harness): {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | null>;
} {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/app/cli/main.ts', 'worker', '--concurrency', '16', '--quiet'],
    {
      cwd: ROOT,
      env: h.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const ready = new Promise<void>((resolve) =>
    child.stderr?.on('data', (b: Buffer) => (b.toString().includes('worker: pid') ? resolve() : undefined)),
  );
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, ready, exited };
}

describe('two worker processes, full-history transactions', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('two-workers');
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('each trade is published once', async () => {
    const workers = [startWorker(h), startWorker(h)];
    try {
      await Promise.all(workers.map((w) => w.ready));
      const result = await h.backfill({ resources: ['transactions'], fullHistory: true }, 280_000);
      const r = await h.verify('transactions');
      expect({ missing: r.missing, duplicates: r.duplicates, unexpected: r.unexpected }).toEqual({
        missing: 0,
        duplicates: 0,
        unexpected: 0,
      });
      expect(result.counters.published).toBe(h.sim.truth('transactions').length);
      expect(result.counters.deduplicated).toBeGreaterThan(0);
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
    }
  });
});
