/**
 * How one call's outcome travels from the fetcher to its caller's process: JSON with the data, or the error's
 * class, message and context, rebuilt on the other side as the same error class (a slot's own error stays a slot
 * error, so the client retries it for that caller alone).
 */
import {
  GamedataError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  UpstreamError,
} from '../../foundation/errors/index.js';
import type { SlotResult } from '../client/transport.js';
import { isSlotError, markSlotError } from '../client/transport.js';

interface WireError {
  n: string;
  m: string;
  r: boolean;
  s?: number;
  p?: string;
  c?: string;
  a?: number;
  u?: string;
  /** A NetworkError's connect failure code. */
  k?: string;
  slot: boolean;
}

/** A decoded reply: a slot result, or the failure of the whole request that carried the call. */
export type Reply = { id: string; result: SlotResult } | { id: string; failure: GamedataError };

function encodeError(error: GamedataError): WireError {
  const wire: WireError = { n: error.name, m: error.message, r: error.retriable, slot: isSlotError(error) };
  if (error instanceof UpstreamError) {
    wire.s = error.status;
    if (error.procedure !== undefined) wire.p = error.procedure;
    if (error.code !== undefined) wire.c = error.code;
    if (error.retryAfterMs !== undefined) wire.a = error.retryAfterMs;
  }
  if (error instanceof NetworkError) {
    wire.u = error.url;
    if (error.connectFailure !== undefined) wire.k = error.connectFailure;
  }
  return wire;
}

function decodeError(w: WireError): GamedataError {
  const opts = { retriable: w.r, ...(w.a === undefined ? {} : { retryAfterMs: w.a }) };
  let error: GamedataError;
  if (w.s !== undefined) {
    const Cls =
      w.n === 'NotFoundError' ? NotFoundError : w.n === 'RateLimitError' ? RateLimitError : UpstreamError;
    error = new Cls(w.m, w.s, w.p, w.c, opts);
  } else if (w.n === 'NetworkError')
    error = new NetworkError(w.m, w.u ?? '', { retriable: w.r, connectFailure: w.k });
  else error = new GamedataError(w.m, { retriable: w.r });
  return w.slot ? markSlotError(error) : error;
}

/** The reply to a call answered in its slot. */
export function encodeResult(id: string, result: SlotResult): string {
  return JSON.stringify(
    result.ok ? { id, ok: true, d: result.data } : { id, ok: false, e: encodeError(result.error) },
  );
}

/** The reply to a call whose whole request failed (after the transport's retries). */
export function encodeFailure(id: string, error: GamedataError): string {
  return JSON.stringify({ id, f: encodeError(error) });
}

/** @throws GamedataError on a reply that is not one of ours. */
export function decodeReply(raw: string): Reply {
  const v = JSON.parse(raw) as { id?: unknown; ok?: boolean; d?: unknown; e?: WireError; f?: WireError };
  if (typeof v.id !== 'string') throw new GamedataError(`budget: unreadable reply ${raw.slice(0, 80)}`);
  if (v.f) return { id: v.id, failure: decodeError(v.f) };
  if (v.ok) return { id: v.id, result: { ok: true, data: v.d } };
  if (v.e) {
    const error = decodeError(v.e);
    if (error instanceof UpstreamError) return { id: v.id, result: { ok: false, error } };
    return { id: v.id, failure: error };
  }
  throw new GamedataError(`budget: unreadable reply ${raw.slice(0, 80)}`);
}
