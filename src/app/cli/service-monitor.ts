/**
 * Watches the services a worker needs (Kafka, the schema registry, Redis, and the upstream) so that a worker never hangs: each service
 * is probed on its own loop (every `intervalMs` while reachable, with doubling backoff from `retryMinMs` to
 * `retryMaxMs` while not), every change of state is said once (`Kafka unreachable at 127.0.0.1:19092 (...),
 * retrying` / `Kafka reachable again`), and a service unreachable for `giveUpAfterMs` in a row calls `onGiveUp`
 * once (the worker then exits non-zero). The state is cached: `/readyz` reads {@link ServiceMonitor.readiness},
 * never a probe. Pure logic over injected probes: the real ones are in service-probes.ts.
 */
import { ServiceError } from '../../foundation/errors/index.js';

export type MonitoredService = 'kafka' | 'schema-registry' | 'redis' | 'upstream';

/** One service and how to check it. */
export interface ServiceProbe {
  service: MonitoredService;
  /** How lines name it, e.g. `Kafka`. */
  label: string;
  /** Where it is, as lines show it (no credentials), e.g. `127.0.0.1:19092`. */
  address: string;
  /** Resolves when the service answers; rejects (with why) when it does not. Must time out by itself. */
  check(): Promise<void>;
  /** Releases the probe's connections. */
  close?(): Promise<void>;
  /** Whether `giveUpAfterMs` unreachable ends the worker (`false`: it waits however long; the upstream). @default true */
  giveUp?: boolean;
}

export interface ServiceMonitorOptions {
  /** Probe period while a service is reachable. @default 5_000 */
  intervalMs?: number;
  /** First retry delay while a service is unreachable (doubles each time). @default 500 */
  retryMinMs?: number;
  /** Longest retry delay. @default 5_000 */
  retryMaxMs?: number;
  /** Unreachable this long in a row: `onGiveUp`. @default 300_000 */
  giveUpAfterMs?: number;
  /** How `giveUpAfterMs` is shown in the give-up line (e.g. the flag's own text). @default `${giveUpAfterMs} ms` */
  giveUpLabel?: string;
  /**
   * When the give-up deadline of a service found down at its first check starts (epoch ms): a worker passes its
   * process start, so `--give-up-after 10s` means 10 s after launch. @default the time of {@link ServiceMonitor.start}
   */
  downSince?: number;
  /** Receives one line per change of state. */
  onChange: (line: string) => void;
  /** Called once, with the service that stayed unreachable too long (a ServiceError, not retriable). */
  onGiveUp: (error: ServiceError) => void;
}

export const DEFAULT_SERVICE_MONITOR_OPTIONS = {
  intervalMs: 5_000,
  retryMinMs: 500,
  retryMaxMs: 5_000,
  giveUpAfterMs: 300_000,
} as const;

export interface ServiceMonitor {
  /** Starts every probe loop (first checks at once). */
  start(): void;
  /** Every service answered its last check. */
  isReady(): boolean;
  /** The cached state, for `/readyz`. */
  readiness(): { ready: boolean; services: Record<string, string> };
  /**
   * Resolves to true once every service is reachable (at once when it already is), to false when `signal` aborts
   * first; rejects with the give-up error.
   */
  waitUntilReady(signal?: AbortSignal): Promise<boolean>;
  /** Someone else saw `service` fail (e.g. a connect): check it again now instead of at the next period. */
  recheck(service: MonitoredService): void;
  /** Checks every service now (waiting for a check already on its way) and resolves to whether all answered. */
  checkNow(): Promise<boolean>;
  /** Subscribes to readiness changes (true = all reachable again). Returns an unsubscribe function. */
  onReadyChange(listener: (ready: boolean) => void): () => void;
  /** Stops the loops and closes the probes. */
  close(): Promise<void>;
}

type State = 'unknown' | 'reachable' | 'unreachable';

interface Entry {
  probe: ServiceProbe;
  state: State;
  retryMs: number;
  timer: NodeJS.Timeout | undefined;
  giveUpTimer: NodeJS.Timeout | undefined;
  /** The check on its way (a run meanwhile asks for another; close() waits for it before closing the probe). */
  inFlight: Promise<void> | undefined;
  again: boolean;
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').trim() || 'no answer';
}

function newEntry(probe: ServiceProbe, retryMs: number): Entry {
  return {
    probe,
    state: 'unknown',
    retryMs,
    timer: undefined,
    giveUpTimer: undefined,
    inFlight: undefined,
    again: false,
  };
}

/**
 * Runs the entry's check once (as its `inFlight`): `failure` says why it failed, `fatal` is set for wrong
 * credentials or certificates (the probes' non-retriable errors), where waiting will not help.
 */
async function checkOnce(e: Entry): Promise<{ failure?: string; fatal?: ServiceError }> {
  let outcome: { failure?: string; fatal?: ServiceError } = {};
  try {
    e.inFlight = e.probe.check();
    await e.inFlight;
  } catch (error) {
    const failure = oneLine(error);
    outcome = error instanceof ServiceError && !error.retriable ? { failure, fatal: error } : { failure };
  }
  e.inFlight = undefined;
  return outcome;
}

/**
 * Resolves to true at the next change to ready, to false when `signal` aborts first; rejects with the give-up
 * error when one is told instead.
 */
function waitForReady(
  onReadyChange: (listener: (ready: boolean) => void) => () => void,
  giveUpError: () => ServiceError | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const done = (): void => {
      off();
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      resolve(false);
    };
    const off = onReadyChange((ready) => {
      const error = giveUpError();
      if (error !== undefined) {
        done();
        reject(error);
      } else if (ready) {
        done();
        resolve(true);
      }
    });
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs a check of every entry now; a check already on its way is waited for (its outcome recorded) first. */
async function checkEntriesNow(entries: readonly Entry[], run: (e: Entry) => Promise<void>): Promise<void> {
  await Promise.all(
    entries.map(async (e) => {
      while (e.inFlight !== undefined) await e.inFlight.catch(() => undefined);
      clearTimeout(e.timer);
      await run(e);
    }),
  );
}

/** Clears every timer of the entries, then closes each probe once the check on its way (if any) ended. */
async function closeEntries(entries: readonly Entry[]): Promise<void> {
  for (const e of entries) {
    clearTimeout(e.timer);
    clearTimeout(e.giveUpTimer);
  }
  // A check on its way may be connecting (a worker woken from SIGSTOP runs its overdue checks as it drains):
  // closing the probe under it would leave the connection it then opens, and that socket keeps the process
  // alive. The checks carry their own timeouts.
  await Promise.all(
    entries.map(async (e) => {
      await e.inFlight?.catch(() => undefined);
      await e.probe.close?.().catch(() => undefined);
    }),
  );
}

/** The give-up error of a service that stayed unreachable for `giveUpLabel` (not retriable: the worker exits). */
function giveUpErrorOf(probe: ServiceProbe, giveUpLabel: string, why: string): ServiceError {
  return new ServiceError(
    `${probe.label} unreachable at ${probe.address} for ${giveUpLabel} (${why}); giving up`,
    probe.service,
    { retriable: false },
  );
}

/** The entry answered: says so if it was down, and resets its backoff and give-up deadline. */
function markReachable(e: Entry, retryMinMs: number, onChange: (line: string) => void): void {
  if (e.state === 'unreachable') onChange(`${e.probe.label} reachable again`);
  e.state = 'reachable';
  e.retryMs = retryMinMs;
  clearTimeout(e.giveUpTimer);
  e.giveUpTimer = undefined;
}

/** The entry's first failure in a row: says so, and arms its give-up deadline (unless its probe waits forever). */
function markUnreachable(
  e: Entry,
  failure: string,
  o: {
    onChange: (line: string) => void;
    giveUpAfterMs: number;
    startedAt: number;
    giveUp: (e: Entry, why: string) => void;
  },
): void {
  o.onChange(`${e.probe.label} unreachable at ${e.probe.address} (${failure}), retrying`);
  // Down from the start: the deadline counts from the start, not from the first answer.
  const elapsed = e.state === 'unknown' ? Date.now() - o.startedAt : 0;
  e.state = 'unreachable';
  if (e.probe.giveUp !== false)
    e.giveUpTimer = setTimeout(() => o.giveUp(e, failure), Math.max(0, o.giveUpAfterMs - elapsed));
}

/** What `/readyz` shows: whether the worker is ready, and each service's cached state. */
function readinessOf(
  entries: readonly Entry[],
  ready: boolean,
): { ready: boolean; services: Record<string, string> } {
  const services: Record<string, string> = {};
  for (const e of entries) services[e.probe.service] = e.state;
  return { ready, services };
}

export function createServiceMonitor(
  probes: readonly ServiceProbe[],
  options: ServiceMonitorOptions,
): ServiceMonitor {
  const o = { ...DEFAULT_SERVICE_MONITOR_OPTIONS, ...options };
  const giveUpLabel = options.giveUpLabel ?? `${o.giveUpAfterMs} ms`;
  const entries = probes.map((probe) => newEntry(probe, o.retryMinMs));
  const readyListeners = new Set<(ready: boolean) => void>();
  let giveUpError: ServiceError | undefined;
  let stopped = false;
  let lastReady = false;
  let startedAt = Date.now();

  const isReady = (): boolean => entries.every((e) => e.state === 'reachable');
  const notify = (): void => {
    const ready = isReady();
    if (ready === lastReady) return;
    lastReady = ready;
    for (const l of [...readyListeners]) l(ready);
  };

  const schedule = (e: Entry, ms: number): void => {
    if (stopped || giveUpError !== undefined) return;
    clearTimeout(e.timer);
    // Not unref'd: a worker that waits for its services must stay alive (close() clears them).
    e.timer = setTimeout(() => void run(e), ms);
  };

  // Once: every loop stops, the worker is told, and so is every readiness listener.
  const fail = (error: ServiceError): void => {
    giveUpError = error;
    for (const x of entries) clearTimeout(x.timer);
    o.onGiveUp(error);
    for (const l of [...readyListeners]) l(false);
  };
  const giveUp = (e: Entry, why: string): void => {
    if (giveUpError !== undefined || stopped) return;
    fail(giveUpErrorOf(e.probe, giveUpLabel, why));
  };

  const run = async (e: Entry): Promise<void> => {
    if (stopped || giveUpError !== undefined) return;
    if (e.inFlight !== undefined) {
      e.again = true;
      return;
    }
    const { failure, fatal } = await checkOnce(e);
    if (stopped || giveUpError !== undefined) return;
    if (fatal !== undefined) return fail(fatal);
    if (failure === undefined) {
      markReachable(e, o.retryMinMs, o.onChange);
      notify();
      schedule(e, e.again ? 0 : o.intervalMs);
    } else {
      if (e.state !== 'unreachable') {
        markUnreachable(e, failure, { ...o, startedAt, giveUp });
        notify();
      }
      schedule(e, e.retryMs);
      e.retryMs = Math.min(o.retryMaxMs, e.retryMs * 2);
    }
    e.again = false;
  };

  return {
    start() {
      startedAt = options.downSince ?? Date.now();
      for (const e of entries) schedule(e, 0);
    },
    isReady,
    readiness: () => readinessOf(entries, giveUpError === undefined && isReady()),
    waitUntilReady(signal) {
      if (giveUpError !== undefined) return Promise.reject(giveUpError);
      if (isReady()) return Promise.resolve(true);
      return waitForReady(
        (listener) => this.onReadyChange(listener),
        () => giveUpError,
        signal,
      );
    },
    recheck(service) {
      for (const e of entries) if (e.probe.service === service) schedule(e, 0);
    },
    async checkNow() {
      await checkEntriesNow(entries, run);
      return isReady();
    },
    onReadyChange(listener) {
      readyListeners.add(listener);
      return () => readyListeners.delete(listener);
    },
    async close() {
      stopped = true;
      await closeEntries(entries);
    },
  };
}
