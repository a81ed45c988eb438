/**
 * How a worker learns to stop: SIGTERM/SIGINT, or (a child of `--processes`) its supervisor's IPC channel closing.
 * The first notice aborts `stopping` (drain); a second signal exits at once without draining.
 */

export interface StopSignals {
  /** Aborted at the first notice (or by whoever else holds the controller: the give-up). */
  readonly stopping: AbortController;
  /** A child of `--processes`: stops listening for the channel and closes it (else it keeps the process alive). */
  disconnect(): void;
}

export function listenForStop(): StopSignals {
  const stopping = new AbortController();
  const onSignal = (signal: string): void => {
    if (stopping.signal.aborted) {
      console.error(`worker: ${signal} again: exiting without draining`);
      process.exit(1);
    }
    console.error(`worker: ${signal}: draining`);
    stopping.abort();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // Only the first notice counts: the channel also closes when this worker disconnects it, once drained.
  const onDisconnect = (): void => {
    if (!stopping.signal.aborted) onSignal('supervisor gone');
  };
  if (process.connected) process.once('disconnect', onDisconnect);
  return {
    stopping,
    disconnect() {
      process.off('disconnect', onDisconnect);
      if (process.connected) process.disconnect();
    },
  };
}
