/**
 * Recognises failures caused by credentials or certificates — wrong password, missing permission, an untrusted or
 * mismatched certificate, TLS spoken to a plaintext port — in what the Kafka (kafkajs), Redis (ioredis) and HTTP
 * (registry, Connect) clients throw. Such a failure does not heal by retrying: callers turn it into one
 * non-retriable line that names the service and what failed (never the secret: see `maskSecrets`).
 *
 * TLS failures are told apart by meaning, from the codes Node gives (kafkajs keeps them on its connection errors):
 * - permanent: a certificate the client does not trust (`CERT_*`, `*_SELF_SIGNED_*`, ...), a name mismatch
 *   (`ERR_TLS_CERT_ALTNAME_INVALID`), a TLS alert from the server about the client's certificate
 *   (`ERR_SSL_*_ALERT_*`), a plaintext answer to a TLS hello (`ERR_SSL_WRONG_VERSION_NUMBER`,
 *   `ERR_SSL_PACKET_LENGTH_TOO_LONG`, `ERR_SSL_HTTP_REQUEST`), an unreadable client key (`ERR_OSSL_*`);
 * - retriable: a connection reset during the handshake (`ECONNRESET`, Node's "disconnected before secure TLS
 *   connection was established") and a bare `EPROTO` (no alert): a broker restarting mid-handshake looks exactly
 *   so. Only on a service's first connection, after {@link FIRST_CONNECT_TLS_RESETS} resets in a row, is it taken
 *   for a plaintext port ({@link handshakeResetFailure}): a broker that never once completed a handshake.
 * Credentials and permissions are decided by class, kafkajs protocol type, HTTP status, and the flag our own errors
 * carry where they are made (`ServiceError.security`: the OAUTHBEARER refusals, and every ServiceError made from a
 * security failure, so `isCredentialRefusal` never re-reads a message; issue 48, item 7).
 * Message text decides only where the library gives nothing else, each said where it is read: a bare `EPROTO` (the
 * OpenSSL alert is only in its text), errors that carry no code at all (kafkajs's `Failed to connect: ...` when a
 * socket cannot even be made, e.g. a client key it cannot decrypt), and a Redis error reply, whose code (`WRONGPASS`,
 * `NOAUTH`, `NOPERM`) RESP puts as the first word of the reply and ioredis' `ReplyError` keeps only as its message.
 */
import type { SecurityFailureKind } from '../errors/index.js';

export type { SecurityFailureKind };

export interface SecurityFailure {
  kind: SecurityFailureKind;
  /** One line: what failed and the hint (e.g. which settings to check). */
  summary: string;
}

const CERT_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

/** What the chain of `error` and its causes says (kafkajs `cause`, Node `cause`, AggregateError `errors`). */
interface ErrorChain {
  messages: string[];
  codes: string[];
  names: string[];
  types: string[];
  /** The error codes of Redis error replies (ioredis `ReplyError`s), see the header. */
  replyCodes: string[];
  /** The first error flagged where it was made (`ServiceError.security`), with its message. */
  flagged: { kind: SecurityFailureKind; message: string } | undefined;
}

const KINDS: ReadonlySet<string> = new Set<SecurityFailureKind>([
  'authentication',
  'authorisation',
  'certificate',
  'host name',
  'TLS handshake',
]);

/** The messages, codes, names, types and flags of `error` and its causes. */
function chain(error: unknown): ErrorChain {
  const out: ErrorChain = {
    messages: [],
    codes: [],
    names: [],
    types: [],
    replyCodes: [],
    flagged: undefined,
  };
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): void => {
    if (e === null || e === undefined || seen.has(e) || depth > 8) return;
    seen.add(e);
    if (typeof e !== 'object') {
      if (typeof e === 'string') out.messages.push(e);
      return;
    }
    const x = e as {
      message?: unknown;
      code?: unknown;
      name?: unknown;
      type?: unknown;
      cause?: unknown;
      errors?: unknown;
      security?: unknown;
    };
    if (typeof x.message === 'string') out.messages.push(x.message);
    if (typeof x.code === 'string') out.codes.push(x.code);
    if (typeof x.name === 'string') out.names.push(x.name);
    if (typeof x.type === 'string') out.types.push(x.type);
    // RESP: an error reply is `-<CODE> <text>`; ioredis keeps only the text (see the header).
    if (x.name === 'ReplyError' && typeof x.message === 'string') {
      const code = /^([A-Z]+)\b/.exec(x.message)?.[1];
      if (code !== undefined) out.replyCodes.push(code);
    }
    if (out.flagged === undefined && typeof x.security === 'string' && KINDS.has(x.security))
      out.flagged = {
        kind: x.security as SecurityFailureKind,
        message: typeof x.message === 'string' ? x.message : '',
      };
    visit(x.cause, depth + 1);
    if (Array.isArray(x.errors)) for (const inner of x.errors as unknown[]) visit(inner, depth + 1);
  };
  visit(error, 0);
  return out;
}

/** The HTTP status of a failed request (axios-like `response.status`, the registry library's `status`). */
function httpStatus(error: unknown): number | undefined {
  const e = error as { status?: unknown; response?: { status?: unknown } } | null;
  const status = e?.response?.status ?? e?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The security failure `error` stands for, or undefined when it is something else (unreachable, overloaded …).
 * @param hints what to check, per kind, e.g. `{ authentication: 'GAMEDATA_KAFKA_SASL_USERNAME / _PASSWORD' }`.
 */
export function securityFailure(
  error: unknown,
  hints: Partial<Record<SecurityFailureKind, string>> = {},
): SecurityFailure | undefined {
  const c = chain(error);
  const make = (kind: SecurityFailureKind, what: string, hint = hints[kind]): SecurityFailure => ({
    kind,
    summary: `${what}${hint === undefined ? '' : ` (check ${hint})`}`,
  });
  // Our own errors say what failed and what to check (the OAUTHBEARER refusals, a ServiceError made from a failure
  // below): kept whole, under whatever wraps them, but for the address a Kafka error's wrapper names again.
  if (c.flagged !== undefined)
    return { kind: c.flagged.kind, summary: c.flagged.message.replace(/^Kafka at \S+: /, '') };
  return tlsFailure(c, make) ?? credentialFailure(c, httpStatus(error), make);
}

type Make = (kind: SecurityFailureKind, what: string, hint?: string) => SecurityFailure;

/** Text of errors without any code (see the header): what they say is all there is. */
const NO_CODE_CERT_TEXT =
  /self[- ]signed certificate[^|]*|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid/i;
const NO_CODE_ALTNAME_TEXT = /does not match certificate's altnames/i;
const NO_CODE_KEY_TEXT = /bad decrypt|bad password read|PEM routines|no start line/i;

/** A certificate, name, key or handshake failure, from Node's codes (text only for errors without a code). */
function tlsFailure(c: ErrorChain, make: Make): SecurityFailure | undefined {
  const text = c.messages.join(' | ');
  const noCode = c.codes.length === 0;
  if (c.codes.includes('ERR_TLS_CERT_ALTNAME_INVALID') || (noCode && NO_CODE_ALTNAME_TEXT.test(text)))
    return make('host name', "host name mismatch: the server's certificate is not for this host name");
  const certCode = c.codes.find((code) => CERT_CODES.has(code));
  if (certCode !== undefined || (noCode && NO_CODE_CERT_TEXT.test(text)))
    return make(
      'certificate',
      `certificate not trusted: ${firstMatch(text, NO_CODE_CERT_TEXT) ?? certCode ?? 'certificate error'}`,
    );
  if (c.codes.some((code) => KEY_CODES.has(code)) || (noCode && NO_CODE_KEY_TEXT.test(text)))
    return make(
      'certificate',
      'the client key could not be read: wrong key password, or not a PEM key',
      'GAMEDATA_KAFKA_SSL_KEY_PASSWORD, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
    );
  const tls = tlsVerdict(c.codes, text);
  if (tls === 'plaintext port')
    return make(
      'TLS handshake',
      'TLS handshake failed: is the port a TLS port, and the protocol setting right?',
    );
  if (tls === 'alert')
    return make(
      'certificate',
      `the server refused the TLS handshake (${firstMatch(text, /alert [a-z ]+/i) ?? alertOf(c.codes) ?? 'alert'}): client certificate missing or not trusted`,
    );
  return undefined;
}

/**
 * Refused credentials or a missing permission: kafkajs' SASL error class and protocol types, the Redis reply's code,
 * the HTTP status.
 */
function credentialFailure(
  c: ErrorChain,
  status: number | undefined,
  make: Make,
): SecurityFailure | undefined {
  const reply = c.replyCodes;
  if (
    c.names.includes('KafkaJSSASLAuthenticationError') ||
    c.types.includes('SASL_AUTHENTICATION_FAILED') ||
    reply.includes('WRONGPASS') ||
    reply.includes('NOAUTH') ||
    status === 401
  )
    return make(
      'authentication',
      `authentication failed${status === 401 ? ' (HTTP 401)' : reply.includes('NOAUTH') ? ' (NOAUTH: a password is required)' : reply.includes('WRONGPASS') ? ' (WRONGPASS)' : ''}`,
    );
  const denied = c.types.find((t) => t.endsWith('AUTHORIZATION_FAILED'));
  if (denied !== undefined || reply.includes('NOPERM') || status === 403) {
    const noperm = c.messages.find((m) => m.startsWith('NOPERM'));
    const what = status === 403 ? ' (HTTP 403)' : `: ${denied ?? noperm ?? 'NOPERM'}`;
    return make('authorisation', `not authorised${what}`);
  }
  return undefined;
}

/** Codes of a client key that cannot be read (OpenSSL 3 through Node). */
const KEY_CODES = new Set([
  'ERR_OSSL_BAD_DECRYPT',
  'ERR_OSSL_PEM_BAD_PASSWORD_READ',
  'ERR_OSSL_PEM_NO_START_LINE',
  'ERR_OSSL_UNSUPPORTED',
  'ERR_OSSL_DECODER_UNSUPPORTED',
]);

/** A TLS hello answered in plaintext (or by something that is no TLS server): the port or the protocol is wrong. */
const PLAINTEXT_PORT_CODES = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_HTTP_REQUEST',
  'ERR_SSL_UNKNOWN_PROTOCOL',
  'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
]);

/** Resets during a TLS handshake: retriable (see the header); `EPROTO` only when no alert says more. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'EPROTO']);

type TlsVerdict = 'plaintext port' | 'alert' | 'reset' | undefined;

/** The meaning of a TLS failure from its codes; the text only for a bare `EPROTO` or an error without a code. */
function tlsVerdict(codes: readonly string[], text: string): TlsVerdict {
  if (codes.some((c) => PLAINTEXT_PORT_CODES.has(c))) return 'plaintext port';
  if (codes.some((c) => /^ERR_SSL_(SSLV3|TLSV1|TLSV13)_ALERT_/.test(c))) return 'alert';
  const textSays = (): TlsVerdict =>
    /wrong version number|packet length too long|http request/i.test(text)
      ? 'plaintext port'
      : /alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i.test(
            text,
          )
        ? 'alert'
        : undefined;
  if (codes.includes('EPROTO')) return textSays() ?? 'reset';
  if (codes.some((c) => RESET_CODES.has(c))) return 'reset';
  if (codes.length === 0) return textSays();
  return undefined;
}

function alertOf(codes: readonly string[]): string | undefined {
  const code = codes.find((c) => c.includes('_ALERT_'));
  return code === undefined
    ? undefined
    : `alert ${code
        .replace(/^.*_ALERT_/, '')
        .replaceAll('_', ' ')
        .toLowerCase()}`;
}

/**
 * Whether `error` is a connection reset during a TLS handshake (a broker restarting, or a plaintext port: see the
 * header), decided from codes. Retriable; {@link handshakeResetFailure} says when it stops being so.
 */
export function isTlsHandshakeReset(error: unknown): boolean {
  const { codes, messages } = chain(error);
  return tlsVerdict(codes, messages.join(' | ')) === 'reset';
}

/**
 * Resets in a row, before a service's first completed connection, after which a TLS handshake reset is taken for a
 * plaintext port (permanent). A service that connected once is never judged so: its resets are restarts.
 */
export const FIRST_CONNECT_TLS_RESETS = 3;

/**
 * The permanent failure that `resets` handshake resets in a row mean, or undefined while they may still be a
 * restart: only before the first connection (`connectedOnce` false) and from {@link FIRST_CONNECT_TLS_RESETS} on.
 */
export function handshakeResetFailure(
  resets: number,
  connectedOnce: boolean,
  hint?: string,
): SecurityFailure | undefined {
  if (connectedOnce || resets < FIRST_CONNECT_TLS_RESETS) return undefined;
  return {
    kind: 'TLS handshake',
    summary: `TLS handshake failed: the connection was reset ${resets} times in a row before any handshake completed; is the port a TLS port, and the protocol setting right?${hint === undefined ? '' : ` (check ${hint})`}`,
  };
}

function firstMatch(text: string, pattern: RegExp): string | undefined {
  return pattern.exec(text)?.[0]?.trim();
}

/** The services whose credentials a worker's probes check (src/app/cli/service-probes.ts). */
const PROBED_SERVICES: ReadonlySet<string> = new Set(['kafka', 'schema-registry', 'redis']);

/**
 * Whether `error` is a refusal of this process's credentials by Kafka, the registry or Redis (wrong password,
 * expired token: kind `authentication`) reported as a non-retriable {@link ServiceError}-like error. Such a failure is
 * the worker's, not the slice's: the slice is handed back for a worker whose credentials work, and the worker's probe
 * of that service, which authenticates too, ends the worker with one line. Missing permissions (`authorisation`) are
 * not included: a probe may not see them (an ACL on one topic), so they stay the slice's own failure.
 */
export function isCredentialRefusal(error: unknown): boolean {
  const e = error as { name?: unknown; service?: unknown; retriable?: unknown } | null;
  if (e === null || typeof e !== 'object' || e.name !== 'ServiceError' || e.retriable !== false) return false;
  if (typeof e.service !== 'string' || !PROBED_SERVICES.has(e.service)) return false;
  return securityFailure(error)?.kind === 'authentication';
}
