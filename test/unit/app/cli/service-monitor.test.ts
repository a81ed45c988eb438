import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServiceMonitor, type ServiceProbe } from '../../../../src/app/cli/service-monitor.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

/** A probe whose answer the test sets; counts its checks. */
function fakeProbe(service: ServiceProbe['service'], label: string, up: boolean) {
  const probe = {
    up,
    checks: 0,
    service,
    label,
    address: `${service}.local:1`,
    check() {
      probe.checks += 1;
      return probe.up ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED'));
    },
  };
  return probe;
}

describe('createServiceMonitor', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('checkNow checks every service at once, between the periods, and answers whether all are up', async () => {
    const kafka = fakeProbe('kafka', 'Kafka', true);
    const redis = fakeProbe('redis', 'Redis', true);
    const lines: string[] = [];
    const m = createServiceMonitor([kafka, redis], {
      onChange: (l) => lines.push(l),
      onGiveUp: vi.fn(),
      intervalMs: 60_000,
    });
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    expect([kafka.checks, redis.checks]).toEqual([1, 1]);
    // the broker goes away between two periods: the next check is a minute off, checkNow asks now
    kafka.up = false;
    await expect(m.checkNow()).resolves.toBe(false);
    expect([kafka.checks, redis.checks]).toEqual([2, 2]);
    expect(lines).toEqual(['Kafka unreachable at kafka.local:1 (connect ECONNREFUSED), retrying']);
    expect(m.isReady()).toBe(false);
    kafka.up = true;
    await expect(m.checkNow()).resolves.toBe(true);
    expect(lines).toEqual([
      'Kafka unreachable at kafka.local:1 (connect ECONNREFUSED), retrying',
      'Kafka reachable again',
    ]);
    await m.close();
  });

  it('says each change of state once, backs off while down, and resolves waitUntilReady when back', async () => {
    const kafka = fakeProbe('kafka', 'Kafka', false);
    const redis = fakeProbe('redis', 'Redis', true);
    const lines: string[] = [];
    const onGiveUp = vi.fn();
    const m = createServiceMonitor([kafka, redis], {
      onChange: (l) => lines.push(l),
      onGiveUp,
      retryMinMs: 100,
      retryMaxMs: 400,
      intervalMs: 1000,
    });
    m.start();
    const ready = m.waitUntilReady();
    await vi.advanceTimersByTimeAsync(0);
    expect(lines).toEqual(['Kafka unreachable at kafka.local:1 (connect ECONNREFUSED), retrying']);
    expect(m.readiness()).toEqual({ ready: false, services: { kafka: 'unreachable', redis: 'reachable' } });
    // Backoff 100, 200, 400, 400 ...: 1 + 5 checks in 1.5 s, still one line.
    await vi.advanceTimersByTimeAsync(1500);
    expect(kafka.checks).toBe(6);
    expect(lines).toHaveLength(1);
    kafka.up = true;
    await vi.advanceTimersByTimeAsync(400);
    await expect(ready).resolves.toBe(true);
    expect(lines).toEqual([
      'Kafka unreachable at kafka.local:1 (connect ECONNREFUSED), retrying',
      'Kafka reachable again',
    ]);
    expect(m.readiness().ready).toBe(true);
    // Goes away later: said once more, readiness follows.
    const changes: boolean[] = [];
    m.onReadyChange((r) => changes.push(r));
    redis.up = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(lines.at(-1)).toBe('Redis unreachable at redis.local:1 (connect ECONNREFUSED), retrying');
    expect(changes).toEqual([false]);
    expect(onGiveUp).not.toHaveBeenCalled();
    await m.close();
  });

  it('gives up once after giveUpAfterMs down in a row, counted from downSince for a service down from the start', async () => {
    const kafka = fakeProbe('kafka', 'Kafka', false);
    const errors: ServiceError[] = [];
    const m = createServiceMonitor([kafka], {
      onChange: () => undefined,
      onGiveUp: (e) => errors.push(e),
      giveUpAfterMs: 10_000,
      giveUpLabel: '10s',
      downSince: Date.now() - 3_000,
    });
    m.start();
    const ready = m.waitUntilReady();
    const settled = ready.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(6_999);
    expect(errors).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ServiceError);
    expect(errors[0]?.message).toBe(
      'Kafka unreachable at kafka.local:1 for 10s (connect ECONNREFUSED); giving up',
    );
    expect(errors[0]?.retriable).toBe(false);
    expect(await settled).toBe(errors[0]);
    // No further checks or calls after giving up.
    const checks = kafka.checks;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(kafka.checks).toBe(checks);
    expect(errors).toHaveLength(1);
    expect(m.readiness().ready).toBe(false);
    await m.close();
  });

  it('a service back before the deadline resets it; waitUntilReady stops on abort', async () => {
    const kafka = fakeProbe('kafka', 'Kafka', false);
    const onGiveUp = vi.fn();
    const m = createServiceMonitor([kafka], {
      onChange: () => undefined,
      onGiveUp,
      giveUpAfterMs: 5_000,
      intervalMs: 1_000,
      retryMaxMs: 500,
    });
    m.start();
    await vi.advanceTimersByTimeAsync(4_000);
    kafka.up = true;
    await vi.advanceTimersByTimeAsync(5_000);
    kafka.up = false;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(onGiveUp).not.toHaveBeenCalled();
    const abort = new AbortController();
    const waiting = m.waitUntilReady(abort.signal);
    abort.abort();
    await expect(waiting).resolves.toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(onGiveUp).toHaveBeenCalledTimes(1);
    await m.close();
  });

  it('closes a probe only after its check on the way has ended (a check connecting as the worker closes)', async () => {
    const events: string[] = [];
    let answer!: () => void;
    const kafka: ServiceProbe = {
      service: 'kafka',
      label: 'Kafka',
      address: 'kafka.local:1',
      check: () => {
        events.push('check');
        return new Promise<void>((resolve) => (answer = resolve)).then(() => {
          events.push('answered');
        });
      },
      close: () => {
        events.push('close');
        return Promise.resolve();
      },
    };
    const m = createServiceMonitor([kafka], { onChange: () => undefined, onGiveUp: () => undefined });
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    const closed = m.close();
    await vi.advanceTimersByTimeAsync(10);
    expect(events).toEqual(['check']); // not closed under the check
    answer();
    await closed;
    expect(events).toEqual(['check', 'answered', 'close']);
  });
});
