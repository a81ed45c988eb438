/**
 * The worker's Kafka probe closed while a check is on its way (a worker woken from SIGSTOP runs its overdue checks
 * as it drains): the check's connection must not outlive close(). It did: kafkajs' connect, disconnected while it
 * connected, opened its connection afterwards, and that socket kept a drained worker alive for minutes (the
 * exactly-once e2e zombie test's slow exits).
 */
import { describe, expect, it } from 'vitest';
import { kafkaProbe } from '../../../../src/app/cli/service-probes.js';
import { serviceUrls } from '../../../helpers/services.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Open TCP sockets of this process to one of `ports`. */
function socketsTo(ports: ReadonlySet<number>): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => {
    const s = h as { remotePort?: number; destroyed?: boolean };
    return s.remotePort !== undefined && ports.has(s.remotePort) && s.destroyed !== true;
  }).length;
}

describe('the Kafka probe closed during a check', () => {
  it('leaves no connection open, wherever in the check close() comes', async () => {
    const brokers = serviceUrls().kafkaBrokers;
    const ports = new Set(brokers.map((b) => Number(b.split(':').at(-1))));
    // Warm: the probe's module loaded, one full check and close (its socket gone).
    const warm = kafkaProbe(brokers);
    await warm.check();
    expect(socketsTo(ports)).toBeGreaterThan(0);
    await warm.close?.();
    await sleep(50);
    expect(socketsTo(ports)).toBe(0);

    const outcomes: string[] = [];
    for (const delay of [0, 0, 1, 2, 3, 5, 8, 12, 20, 40]) {
      const probe = kafkaProbe(brokers);
      const check = probe.check().then(
        () => 'answered',
        () => 'refused',
      );
      if (delay > 0) await sleep(delay);
      await probe.close?.();
      outcomes.push(await check);
      await sleep(50);
      expect({ delay, open: socketsTo(ports) }).toEqual({ delay, open: 0 });
    }
    // Some closes came before the answer (the race this is about), some after.
    expect(outcomes).toContain('refused');
  });
});
