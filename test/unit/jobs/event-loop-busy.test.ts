/** The worker's event-loop utilization for slot sizing: a blocked loop reads busy, a waiting one does not. */
import { describe, expect, it } from 'vitest';
import { startEventLoopBusy } from '../../../src/jobs/event-loop-busy.js';

describe('startEventLoopBusy', () => {
  it('reads ~1 after the loop was blocked and < 0.5 after it waited, each read covering the time since the last', async () => {
    const busy = startEventLoopBusy();
    busy.read();
    const until = Date.now() + 200;
    while (Date.now() < until) {
      // blocked: no idle wait at all
    }
    expect(busy.read()).toBeGreaterThan(0.9);
    await new Promise((r) => setTimeout(r, 200));
    const idle = busy.read();
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(idle).toBeLessThan(0.5);
  });
});
