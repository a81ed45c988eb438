import { describe, expect, it } from 'vitest';
import {
  childExecArgv,
  childMetricsPort,
  resolveProcessCount,
  superviseWorkerProcesses,
  type WorkerChild,
} from '../../../../src/app/cli/worker-processes.js';

type Exit = (code: number | null, signal: NodeJS.Signals | null) => void;

/** Recording fakes: children that remember the signals they got and exit when told to; a manual clock/timers. */
function harness() {
  const children: { index: number; pid: number; signals: string[]; exit: Exit }[] = [];
  const timers: { at: number; fn: () => void }[] = [];
  const logs: string[] = [];
  let now = 0;
  let signal: (s: NodeJS.Signals) => void = () => undefined;
  const deps = {
    spawn(index: number): WorkerChild {
      const rec = {
        index,
        pid: 100 + children.length,
        signals: [] as string[],
        exit: (() => undefined) as Exit,
      };
      children.push(rec);
      return {
        pid: rec.pid,
        kill: (s) => (rec.signals.push(s), true),
        once: (_e, l) => (rec.exit = l),
      };
    },
    onSignal: (l: (s: NodeJS.Signals) => void) => (signal = l),
    log: (line: string) => logs.push(line),
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => timers.push({ at: now + ms, fn }),
  };
  const advance = (ms: number): void => {
    now += ms;
    for (const t of timers.filter((t) => t.at <= now)) {
      timers.splice(timers.indexOf(t), 1);
      t.fn();
    }
  };
  return { children, logs, deps, advance, signal: (s: NodeJS.Signals) => signal(s), timers };
}

describe('resolveProcessCount', () => {
  it('auto is the parallelism; a number is itself; anything else is one clear error', () => {
    expect(resolveProcessCount('auto', 6)).toBe(6);
    expect(resolveProcessCount('3', 6)).toBe(3);
    expect(() => resolveProcessCount('0')).toThrow(/--processes must be a positive integer or auto, got "0"/);
    expect(() => resolveProcessCount('two')).toThrow(/--processes/);
  });
});

describe('childMetricsPort', () => {
  it('gives port + index, keeps 0 and off, and defaults to 9464', () => {
    expect(childMetricsPort(9000, 2)).toBe('9002');
    expect(childMetricsPort(undefined, 1)).toBe('9465');
    expect(childMetricsPort(0, 3)).toBe('0');
    expect(childMetricsPort(false, 3)).toBe('off');
  });
});

describe('superviseWorkerProcesses', () => {
  it('starts N children, forwards a signal as SIGTERM and exits 0 when all stop cleanly', async () => {
    const h = harness();
    const done = superviseWorkerProcesses({ processes: 3 }, h.deps);
    expect(h.children.map((c) => c.index)).toEqual([0, 1, 2]);
    h.signal('SIGINT');
    expect(h.children.map((c) => c.signals)).toEqual([['SIGTERM'], ['SIGTERM'], ['SIGTERM']]);
    for (const c of h.children) c.exit(0, null);
    expect(await done).toBe(0);
  });

  it('restarts a crashed child with doubling backoff, then gives up, stops the others and exits 1', async () => {
    const h = harness();
    const done = superviseWorkerProcesses({ processes: 2, maxRestarts: 2, restartBackoffMs: 100 }, h.deps);
    h.children[0]?.exit(1, null);
    h.advance(99);
    expect(h.children).toHaveLength(2);
    h.advance(1);
    expect(h.children.at(-1)?.index).toBe(0); // first restart after 100 ms
    h.children.at(-1)?.exit(null, 'SIGKILL');
    h.advance(199);
    expect(h.children).toHaveLength(3);
    h.advance(1); // second restart after 200 ms
    expect(h.children).toHaveLength(4);
    h.children.at(-1)?.exit(1, null); // third crash in a row: give up
    expect(h.logs.at(-1)).toMatch(/child 0 .* 2 restarts in a row: giving up: stopping 1/);
    expect(h.children[1]?.signals).toEqual(['SIGTERM']);
    h.children[1]?.exit(0, null);
    expect(await done).toBe(1);
  });

  it('resets the crash count after a stable run, and kills children that outlive the stop timeout', async () => {
    const h = harness();
    const done = superviseWorkerProcesses(
      { processes: 1, maxRestarts: 1, restartBackoffMs: 10, stableAfterMs: 1000, stopTimeoutMs: 500 },
      h.deps,
    );
    h.advance(1000);
    h.children[0]?.exit(1, null);
    h.advance(10);
    h.advance(1000);
    h.children[1]?.exit(1, null); // stable run before: restart count back to 1, not give-up
    h.advance(10);
    expect(h.children).toHaveLength(3);
    h.signal('SIGTERM');
    h.advance(500);
    expect(h.children[2]?.signals).toEqual(['SIGTERM', 'SIGKILL']);
    h.children[2]?.exit(null, 'SIGKILL');
    expect(await done).toBe(1);
  });
});

describe("the children's Node flags", () => {
  it("add the heap limit and growing factor to the supervisor's own flags", () => {
    expect(childExecArgv(['--enable-source-maps'], undefined, {})).toEqual([
      '--enable-source-maps',
      '--max-old-space-size=256',
      '--heap-growing-percent=200',
    ]);
    expect(childExecArgv([], '', { maxOldSpaceMb: 512, heapGrowingPercent: 100 })).toEqual([
      '--max-old-space-size=512',
      '--heap-growing-percent=100',
    ]);
  });

  it('keep what the flags or NODE_OPTIONS already choose', () => {
    expect(childExecArgv(['--max-old-space-size=1024'], undefined, {})).toEqual([
      '--max-old-space-size=1024',
      '--heap-growing-percent=200',
    ]);
    expect(childExecArgv([], '--max-old-space-size=96', {})).toEqual(['--heap-growing-percent=200']);
    expect(childExecArgv(['--heap-growing-percent=50'], undefined, {})).toEqual([
      '--heap-growing-percent=50',
      '--max-old-space-size=256',
    ]);
  });
});
