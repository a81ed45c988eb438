import { describe, expect, it } from 'vitest';
import { countNames, exitIfStillRunning } from '../../../../src/app/cli/exit-if-still-running.js';

describe('exitIfStillRunning', () => {
  it('names what is still open and exits when something keeps the process running', async () => {
    const open = setInterval(() => undefined, 1_000); // what a library forgot to close
    const lines: string[] = [];
    const codes: number[] = [];
    try {
      exitIfStillRunning(30, 'worker', { log: (l) => lines.push(l), exit: (c) => codes.push(c) });
      await new Promise((r) => setTimeout(r, 80));
    } finally {
      clearInterval(open);
    }
    expect(codes).toEqual([0]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^worker: closed, but still running after .* \(open: .*Timeout x\d+.*\): exiting$/,
    );
  });

  it("does not itself keep the process running (its timer is unref'd)", () => {
    const timer = exitIfStillRunning(60_000, 'worker', { log: () => undefined, exit: () => undefined });
    try {
      expect(timer.hasRef()).toBe(false);
    } finally {
      clearTimeout(timer);
    }
  });

  it('counts resources by name', () => {
    expect(countNames(['TCPWRAP', 'Timeout', 'Timeout'])).toBe('TCPWRAP x1, Timeout x2');
    expect(countNames([])).toBe('nothing');
  });
});
