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
 * Message text decides only where no code says more: a bare `EPROTO` (the OpenSSL alert is in its text) and errors
 * that carry no code at all (kafkajs's `Failed to connect: ...` when a socket cannot even be made).
 */

/** What failed. */
export type SecurityFailureKind =
  'authentication' | 'authorisation' | 'certificate' | 'host name' | 'TLS handshake';

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

/** The messages and codes of `error` and its causes (kafkajs `cause`, Node `cause`, AggregateError `errors`). */
function chain(error: unknown): { messages: string[]; codes: string[]; names: string[]; types: string[] } {
  const out = {
    messages: [] as string[],
    codes: [] as string[],
    names: [] as string[],
    types: [] as string[],
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
      status?: unknown;
    };
    if (typeof x.message === 'string') out.messages.push(x.message);
    if (typeof x.code === 'string') out.codes.push(x.code);
    if (typeof x.name === 'string') out.names.push(x.name);
    if (typeof x.type === 'string') out.types.push(x.type);
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
  const { messages, codes, names, types } = chain(error);
  const text = messages.join(' | ');
  const status = httpStatus(error);
  const make = (kind: SecurityFailureKind, what: string, hint = hints[kind]): SecurityFailure => ({
    kind,
    summary: `${what}${hint === undefined ? '' : ` (check ${hint})`}`,
  });
  // OAUTHBEARER's own refusals (output/kafka/oauthbearer-authenticator.ts, config/oauthbearer-token-endpoint.ts) already say
  // what failed and what to check: kept whole, under whatever wraps them
  const oauth = messages.find((m) =>
    /^(Kafka at \S+: authentication failed: SASL OAUTHBEARER|OAuth token endpoint at \S+: authentication failed)/.test(
      m,
    ),
  );
  if (oauth !== undefined) return { kind: 'authentication', summary: oauth.replace(/^Kafka at \S+: /, '') };
  if (codes.includes('ERR_TLS_CERT_ALTNAME_INVALID') || /does not match certificate's altnames/i.test(text))
    return make('host name', "host name mismatch: the server's certificate is not for this host name");
  const certCode = codes.find((c) => CERT_CODES.has(c));
  if (
    certCode !== undefined ||
    /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid/i.test(
      text,
    )
  )
    return make(
      'certificate',
      `certificate not trusted: ${firstMatch(text, /(self[- ]signed certificate[^|]*|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid)/i) ?? certCode ?? 'certificate error'}`,
    );
  if (
    codes.some((c) => KEY_CODES.has(c)) ||
    /bad decrypt|bad password read|PEM routines|no start line/i.test(text)
  )
    return make(
      'certificate',
      'the client key could not be read: wrong key password, or not a PEM key',
      'GAMEDATA_KAFKA_SSL_KEY_PASSWORD, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
    );
  const tls = tlsVerdict(codes, text);
  if (tls === 'plaintext port')
    return make(
      'TLS handshake',
      'TLS handshake failed: is the port a TLS port, and the protocol setting right?',
    );
  if (tls === 'alert')
    return make(
      'certificate',
      `the server refused the TLS handshake (${firstMatch(text, /alert [a-z ]+/i) ?? alertOf(codes) ?? 'alert'}): client certificate missing or not trusted`,
    );
  if (
    names.includes('KafkaJSSASLAuthenticationError') ||
    /SASL .*authentication failed|Invalid username or password|WRONGPASS|NOAUTH|invalid username-password pair|authentication failed/i.test(
      text,
    ) ||
    types.includes('SASL_AUTHENTICATION_FAILED') ||
    status === 401
  )
    return make(
      'authentication',
      `authentication failed${status === 401 ? ' (HTTP 401)' : /NOAUTH/.test(text) ? ' (NOAUTH: a password is required)' : /WRONGPASS/.test(text) ? ' (WRONGPASS)' : ''}`,
    );
  if (
    types.some((t) => t.endsWith('AUTHORIZATION_FAILED')) ||
    /NOPERM|not authori[sz]ed|AUTHORIZATION_FAILED/i.test(text) ||
    status === 403
  )
    return make(
      'authorisation',
      `not authorised${status === 403 ? ' (HTTP 403)' : `: ${firstMatch(text, /(NOPERM[^|]*|[A-Z_]*AUTHORIZATION_FAILED|not authori[sz]ed[^|]*)/) ?? ''}`}`.replace(
        /: $/,
        '',
      ),
    );
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
