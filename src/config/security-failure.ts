/**
 * Recognises failures caused by credentials or certificates — wrong password, missing permission, an untrusted or
 * mismatched certificate, TLS spoken to a plaintext port — in what the Kafka (kafkajs), Redis (ioredis) and HTTP
 * (registry, Connect) clients throw. Such a failure does not heal by retrying: callers turn it into one
 * non-retriable line that names the service and what failed (never the secret: see `maskSecrets`).
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
  if (/bad decrypt|bad password read|PEM routines|no start line/i.test(text))
    return make(
      'certificate',
      'the client key could not be read: wrong key password, or not a PEM key',
      'GAMEDATA_KAFKA_SSL_KEY_PASSWORD, GAMEDATA_KAFKA_SSL_KEY_LOCATION',
    );
  if (
    /alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i.test(
      text,
    )
  )
    return make(
      'certificate',
      `the server refused the TLS handshake (${firstMatch(text, /alert [a-z ]+/i) ?? 'alert'}): client certificate missing or not trusted`,
    );
  if (
    /wrong version number|packet length too long|EPROTO|disconnected before secure TLS connection/i.test(
      text,
    ) ||
    codes.includes('EPROTO')
  )
    return make(
      'TLS handshake',
      'TLS handshake failed: is the port a TLS port, and the protocol setting right?',
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

function firstMatch(text: string, pattern: RegExp): string | undefined {
  return pattern.exec(text)?.[0]?.trim();
}
