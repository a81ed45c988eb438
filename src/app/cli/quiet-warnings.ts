/**
 * Node 24 warns `TimeoutNegativeWarning: -1795630108114 is a negative number` once per process running kafkajs
 * 2.2.4: its request queue schedules `setTimeout(check, throttledUntil - Date.now())` with `throttledUntil = -1`
 * while nothing is throttled (kafkajs `src/network/requestQueue/index.js`, `scheduleCheckPendingRequests`). Node
 * clamps the delay to 1 ms, exactly what kafkajs meant, so the line is noise; Node 20 said nothing. Only that
 * warning from that caller is dropped: every other warning prints as before.
 */

/** Why a warning is kept or dropped, from its type and the stack of the call that raised it. */
export function isKafkajsNegativeTimeout(type: string | undefined, stack: string): boolean {
  return type === 'TimeoutNegativeWarning' && /kafkajs[\\/]src[\\/]network[\\/]requestQueue/.test(stack);
}

/** Drops kafkajs' negative-timeout warning for this process (the CLI calls it once at start). */
export function dropKafkajsNegativeTimeoutWarning(): void {
  const emitWarning = process.emitWarning.bind(process) as (
    warning: string | Error,
    ...rest: unknown[]
  ) => void;
  const filtered = (warning: string | Error, ...rest: unknown[]): void => {
    const first = rest[0];
    const type =
      typeof first === 'string'
        ? first
        : typeof first === 'object' && first !== null && 'type' in first
          ? String((first as { type?: unknown }).type)
          : warning instanceof Error
            ? warning.name
            : undefined;
    if (isKafkajsNegativeTimeout(type, new Error().stack ?? '')) return;
    emitWarning(warning, ...rest);
  };
  process.emitWarning = filtered;
}
