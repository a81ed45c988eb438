/**
 * tRPC-over-HTTP transport: one HTTP exchange carrying one or more procedure calls.
 * - one call: `GET {base}/{procedure}?input=<JSON>`
 * - several: `POST {base}/{p0},{p1},...?batch=1` with body `{"0":input0,...}` -> one envelope per call, in order.
 * Whole-request failures (network, timeouts, non-envelope answers) are retried here with the one retry helper;
 * per-procedure errors inside an answer are handed back per slot (the caller retries its own slot alone).
 */
import {
  AbortedError,
  GamedataError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  UpstreamError,
} from '../../foundation/errors/index.js';
import type { RateLimiter } from './rate-limiter.js';
import { parseRetryAfter } from './rate-limiter.js';
import type { RetryPolicy } from '../../foundation/retry/index.js';
import { withRetry } from './retry.js';
import { requestTimeoutMs } from './call-cost.js';
import { withoutCredentials } from '../../foundation/config/index.js';
import { fetchSameOrigin } from './internal/fetch-same-origin.js';
import { connectFailureCode } from './connect-failure.js';
import { readCapped } from './read-capped.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ProcedureCall {
  procedure: string;
  input: unknown;
  /**
   * The serial (feed lane) ms the call is expected to cost the key (`call-cost.ts`), when the caller priced it: batches
   * are composed and timeouts set by it. Never sent.
   */
  serialMs?: number | undefined;
}

/** Per-request options of {@link Transport.send}. */
export interface SendOptions {
  /**
   * The serial feed work this request waits for (the lane's backlog ahead of it plus its own feed calls), ms: the
   * timeout grows by 1.5x this (`requestTimeoutMs`), so a request is not abandoned while the key still works it.
   */
  serialMs?: number | undefined;
}

export type SlotResult = { ok: true; data: unknown } | { ok: false; error: UpstreamError };

export interface TransportOptions {
  /** Base URL ending in `/trpc`. */
  baseUrl: string;
  /** Sent as `X-API-Key` when set. */
  apiKey?: string | undefined;
  /** Injected `fetch` (Node's global fetch keeps connections alive in a pooled dispatcher). */
  fetch: FetchLike;
  /** Per-request timeout in ms; a timed-out request is a retriable NetworkError. */
  timeoutMs: number;
  /** Largest answer body read, bytes; a larger one is a retriable UpstreamError (`read-capped.ts`). @default 64 MiB */
  maxResponseBytes?: number | undefined;
  limiter: RateLimiter;
  retry: RetryPolicy;
  /** Called after every HTTP exchange (metrics, logs). */
  onRequest?: ((info: { procedures: number; status: number | undefined; ms: number }) => void) | undefined;
}

export interface Transport {
  /** Sends the calls in one HTTP request; resolves with one result per call, in order. */
  send(calls: readonly ProcedureCall[], signal?: AbortSignal, options?: SendOptions): Promise<SlotResult[]>;
}

/** Strips `null`/`undefined` keys (the wire contract drops them) without reordering the rest. */
export function cleanInput(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/** Marks errors that came from one slot of an answer (only these are retried per caller). */
const slotErrors = new WeakSet<GamedataError>();
export function isSlotError(error: unknown): boolean {
  return error instanceof GamedataError && slotErrors.has(error);
}
/** Marks an error as one slot's own (a shared budget rebuilding an error another process received). */
export function markSlotError<E extends GamedataError>(error: E): E {
  slotErrors.add(error);
  return error;
}

function errorFromEnvelope(
  envelope: Record<string, unknown>,
  status: number,
  procedure: string,
  retryAfterMs?: number,
): UpstreamError {
  const err = (envelope['error'] ?? {}) as Record<string, unknown>;
  const data = (err['data'] ?? {}) as Record<string, unknown>;
  const httpStatus =
    typeof data['httpStatus'] === 'number' ? data['httpStatus'] : status >= 400 ? status : 500;
  const code = typeof data['code'] === 'string' ? data['code'] : undefined;
  const message = `${procedure}: ${typeof err['message'] === 'string' ? err['message'] : 'error'} (${httpStatus}${code ? ` ${code}` : ''})`;
  const opts = retryAfterMs === undefined ? {} : { retryAfterMs };
  const Cls = httpStatus === 404 ? NotFoundError : httpStatus === 429 ? RateLimitError : UpstreamError;
  const error = new Cls(message, httpStatus, procedure, code, opts);
  slotErrors.add(error);
  return error;
}

function isEnvelope(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    ('result' in value || 'error' in value)
  );
}

/** The HTTP request of the calls: a GET with the one call's input in its query, or a POST of the batch's inputs. */
function requestOf(
  base: string,
  headers: Readonly<Record<string, string>>,
  calls: readonly ProcedureCall[],
): { batch: boolean; procedures: string; url: string; init: RequestInit } {
  const batch = calls.length > 1;
  const procedures = calls.map((c) => c.procedure).join(',');
  let url: string;
  const init: RequestInit = { headers: { ...headers } };
  if (batch) {
    const body: Record<string, unknown> = {};
    calls.forEach((c, i) => (body[String(i)] = cleanInput(c.input)));
    url = `${base}/${procedures}?batch=1`;
    init.method = 'POST';
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  } else {
    url = `${base}/${procedures}?input=${encodeURIComponent(JSON.stringify(cleanInput(calls[0]?.input ?? {})))}`;
    init.method = 'GET';
  }
  return { batch, procedures, url, init };
}

/**
 * The answer's results, one per call, when it carries an envelope per call; else throws the whole request's error
 * (retriable or not by its status).
 */
function settleAnswer(
  text: string,
  status: number,
  retryAfterMs: number | undefined,
  request: {
    calls: readonly ProcedureCall[];
    batch: boolean;
    procedures: string;
    method: string | undefined;
  },
): SlotResult[] {
  const { calls, batch, procedures, method } = request;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // Answers that carry one envelope per call settle per slot, whatever the HTTP status (200, 207, uniform 4xx).
  const envelopes = batch ? parsed : [parsed];
  if (Array.isArray(envelopes) && envelopes.length === calls.length && envelopes.every(isEnvelope)) {
    return envelopes.map((env, i): SlotResult => {
      const procedure = calls[i]?.procedure ?? '?';
      if ('error' in env)
        return { ok: false, error: errorFromEnvelope(env, status, procedure, retryAfterMs) };
      const result = env['result'] as Record<string, unknown> | undefined;
      return { ok: true, data: result?.['data'] };
    });
  }
  // Whole-request failure: the status decides whether it is worth another try.
  const envelopeMessage =
    isEnvelope(parsed) && 'error' in parsed
      ? (parsed['error'] as Record<string, unknown>)['message']
      : undefined;
  const message = typeof envelopeMessage === 'string' ? envelopeMessage : text.slice(0, 200);
  const opts = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status >= 400) {
    const Cls = status === 429 ? RateLimitError : status === 404 ? NotFoundError : UpstreamError;
    throw new Cls(
      `${method} ${procedures.slice(0, 80)}: HTTP ${status} ${message}`,
      status,
      batch ? undefined : calls[0]?.procedure,
      undefined,
      opts,
    );
  }
  throw new UpstreamError(
    `${method} ${procedures.slice(0, 80)}: unreadable answer (HTTP ${status})`,
    status,
    undefined,
    undefined,
    {
      retriable: true,
    },
  );
}

/** The default byte cap of an answer: a full 50-call batch of 100-article pages with their bodies fits. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export function createTransport(options: TransportOptions): Transport {
  const base = options.baseUrl.replace(/\/+$/, '');
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;

  async function attempt(
    calls: readonly ProcedureCall[],
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<SlotResult[]> {
    const { batch, procedures, url, init } = requestOf(base, headers, calls);
    await options.limiter.acquire(signal);
    const timeout = AbortSignal.timeout(timeoutMs);
    init.signal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await fetchSameOrigin(options.fetch, url, init); // no x-api-key to another origin
      text = await readCapped(response, maxResponseBytes, `${init.method} ${procedures.slice(0, 80)}`);
    } catch (cause) {
      if (cause instanceof UpstreamError) {
        // Over the byte cap: the upstream answered (an HTTP exchange happened, the pacing saw no headers of it).
        options.limiter.complete(undefined, undefined);
        options.onRequest?.({
          procedures: calls.length,
          status: cause.status,
          ms: performance.now() - started,
        });
        throw cause;
      }
      options.limiter.complete(undefined, undefined);
      options.onRequest?.({ procedures: calls.length, status: undefined, ms: performance.now() - started });
      if (signal?.aborted) throw new AbortedError('aborted', { cause: signal.reason });
      const reason = timeout.aborted
        ? `timed out after ${timeoutMs} ms`
        : cause instanceof Error
          ? describeCause(cause)
          : String(cause);
      // the address without credentials: an API URL may carry `user:password@`
      throw new NetworkError(
        `${init.method} ${withoutCredentials(base)}/${procedures.length > 80 ? `${procedures.slice(0, 80)}…` : procedures}: ${reason}`,
        withoutCredentials(base),
        { cause, connectFailure: timeout.aborted ? undefined : connectFailureCode(cause) },
      );
    }
    const status = response.status;
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    options.limiter.complete(response.headers, status, retryAfterMs);
    options.onRequest?.({ procedures: calls.length, status, ms: performance.now() - started });

    return settleAnswer(text, status, retryAfterMs, { calls, batch, procedures, method: init.method });
  }

  return {
    send(calls, signal, sendOptions) {
      const timeoutMs = requestTimeoutMs(options.timeoutMs, 0, sendOptions?.serialMs ?? 0);
      return withRetry(() => attempt(calls, signal, timeoutMs), options.retry, { signal });
    },
  };
}

function describeCause(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error)
    return `${error.message}: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`;
  return error.message;
}
