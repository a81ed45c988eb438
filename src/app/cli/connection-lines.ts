/**
 * Quiet Redis clients for the commands: a lost connection is one line per change of state (`Redis unreachable at
 * 127.0.0.1:16379 (ECONNREFUSED), retrying`, then `Redis reachable again`), as the worker's service monitor says
 * it, however many clients share the reporter and however often ioredis retries. An ioredis client with no `error`
 * listener prints `[ioredis] Unhandled error event` and a stack trace on every retry instead (issue 25: five of them
 * during a Redis restart under `backfill --wait`), so every client a command makes is watched by one.
 */
import type { Redis } from 'ioredis';

export interface ConnectionLinesOptions {
  /** How lines name the service, e.g. `Redis`. */
  label: string;
  /** Where it is, as lines show it (no credentials), e.g. `127.0.0.1:16379`. */
  address: string;
  /** Receives one line per change of state. */
  onChange: (line: string) => void;
}

export interface ConnectionLines {
  /** Reports `client`'s connection errors and recoveries through these lines; returns the client. */
  watch<C extends Redis>(client: C): C;
  /** The state the lines last said. */
  readonly state: 'reachable' | 'unreachable';
}

/** Why a connection failed, short: the errno code (`ECONNREFUSED`) when there is one. */
function reasonOf(error: Error): string {
  return (error as NodeJS.ErrnoException).code ?? error.message;
}

/**
 * One reporter for the clients of one service.
 * @example
 * const lines = createConnectionLines({ label: 'Redis', address: addressOf(url), onChange: (l) => console.error(l) });
 * const redis = lines.watch(connectRedis(url));
 */
export function createConnectionLines(options: ConnectionLinesOptions): ConnectionLines {
  let state: 'reachable' | 'unreachable' = 'reachable';
  const onError = (error: Error): void => {
    if (state === 'unreachable') return;
    state = 'unreachable';
    options.onChange(`${options.label} unreachable at ${options.address} (${reasonOf(error)}), retrying`);
  };
  const onReady = (): void => {
    if (state === 'reachable') return;
    state = 'reachable';
    options.onChange(`${options.label} reachable again`);
  };
  return {
    watch(client) {
      client.on('error', onError);
      client.on('ready', onReady);
      return client;
    },
    get state() {
      return state;
    },
  };
}

/** The Redis lines of one command, on stderr: `backfill: Redis unreachable at 127.0.0.1:16379 (ECONNREFUSED), retrying`. */
export function commandRedisLines(command: string, address: string): ConnectionLines {
  return createConnectionLines({
    label: 'Redis',
    address,
    onChange: (line) => console.error(`${command}: ${line}`),
  });
}
