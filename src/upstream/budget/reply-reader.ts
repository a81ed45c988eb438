/**
 * The reply side of the shared budget: one blocking connection per process reads its reply list (`BLPOP`, then up to
 * 1000 more at once) and hands each decoded outcome to the call waiting for it. Started by the first call routed.
 */
import type { Redis } from 'ioredis';
import { createBackoff } from '../../foundation/retry/index.js';
import { BACKGROUND_FAILURE_BACKOFF, type ReportError } from './budget-errors.js';
import type { CallOutcome } from './call-queue.js';
import { decodeReply } from './reply-codec.js';

export interface ReplyReaderOptions {
  redis: Redis;
  /** This process's reply list. */
  replyKey: string;
  isClosed: () => boolean;
  report: ReportError;
  /** Settles a call of this process (a call no longer waiting is ignored). */
  settle: (callId: string, outcome: CallOutcome) => void;
}

export interface ReplyReader {
  /** Starts the read loop unless it runs. */
  ensure(): void;
  /** Drops the connection (the budget is closed first, so the loop ends). */
  disconnect(): void;
  /** Resolves when the loop has ended (at once when it never started). */
  done(): Promise<void>;
}

export function createReplyReader(options: ReplyReaderOptions): ReplyReader {
  const { redis, replyKey, report } = options;
  let conn: Redis | undefined;
  let loop: Promise<void> | undefined;

  function deliver(raw: string): void {
    let reply;
    try {
      reply = decodeReply(raw);
    } catch (error) {
      report(error, 'reply');
      return;
    }
    // Not waiting: aborted, or a duplicate after a fetcher change.
    options.settle(reply.id, reply);
  }

  async function read(): Promise<void> {
    const c = redis.duplicate();
    conn = c;
    // Connection errors surface on the commands (and a worker reports an outage once); without a listener ioredis
    // prints every reconnect failure with a stack trace.
    c.on('error', () => undefined);
    const backoff = createBackoff(BACKGROUND_FAILURE_BACKOFF);
    while (!options.isClosed()) {
      try {
        const first = await c.blpop(replyKey, 1);
        backoff.reset();
        if (!first) continue;
        const more = (await c.lpop(replyKey, 1000)) ?? [];
        for (const raw of [first[1], ...more]) deliver(raw);
      } catch (error) {
        if (options.isClosed()) return;
        report(error, 'reading replies');
        await backoff.pause();
      }
    }
  }

  return {
    ensure: () => {
      loop ??= read();
    },
    disconnect: () => conn?.disconnect(),
    done: async () => {
      await loop;
    },
  };
}
