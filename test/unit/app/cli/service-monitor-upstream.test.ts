/** Issue 48: the upstream's probe never ends the worker (the upstream is not ours: a worker waits for it). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServiceMonitor, type ServiceProbe } from '../../../../src/app/cli/service-monitor.js';
import { upstreamEndpoint } from '../../../../src/app/cli/upstream-probe.js';

const down = (service: ServiceProbe['service'], label: string, giveUp?: boolean): ServiceProbe => ({
  service,
  label,
  address: `${service}.local:1`,
  ...(giveUp === undefined ? {} : { giveUp }),
  check: () => Promise.reject(new Error('ECONNREFUSED')),
});

describe('the upstream in the service monitor', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('an upstream probe (giveUp: false) down past giveUpAfterMs: one line, not ready, no give-up', async () => {
    const lines: string[] = [];
    const onGiveUp = vi.fn();
    const m = createServiceMonitor([down('upstream', 'the upstream', false)], {
      onChange: (l) => lines.push(l),
      onGiveUp,
      giveUpAfterMs: 1_000,
    });
    m.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(onGiveUp).not.toHaveBeenCalled();
    expect(lines).toEqual(['the upstream unreachable at upstream.local:1 (ECONNREFUSED), retrying']);
    expect(m.readiness()).toEqual({ ready: false, services: { upstream: 'unreachable' } });
    await m.close();
  });

  it('a probe without giveUp still gives up (Kafka, the registry, Redis)', async () => {
    const onGiveUp = vi.fn();
    const m = createServiceMonitor([down('kafka', 'Kafka')], {
      onChange: () => undefined,
      onGiveUp,
      giveUpAfterMs: 1_000,
    });
    m.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(onGiveUp).toHaveBeenCalledTimes(1);
    await m.close();
  });
});

describe('upstreamEndpoint', () => {
  it.each([
    ['http://127.0.0.1:4000/trpc', '127.0.0.1', 4000],
    ['https://api2.example/trpc', 'api2.example', 443],
    ['http://game.example/trpc', 'game.example', 80],
    ['http://[::1]:9/trpc', '::1', 9],
    ['http://user:secret@host.example:81/trpc', 'host.example', 81],
  ])('%s -> %s:%d', (url, host, port) => {
    expect(upstreamEndpoint(url)).toEqual({ host, port });
  });
});
