/**
 * SASL OAUTHBEARER tokens from an OIDC / OAuth 2 token endpoint by the client-credentials grant (RFC 6749 §4.4), the
 * way Confluent's clients do it (librdkafka `sasl.oauthbearer.method=oidc`, Java's `OAuthBearerLoginCallbackHandler`):
 * `POST <token endpoint>` with `grant_type=client_credentials` (and `scope` when set), the client id and secret in
 * HTTP basic auth, each form-encoded first (RFC 6749 §2.3.1); the answer's `access_token` is sent to the brokers.
 *
 * {@link createTokenEndpointProvider} gives kafkajs its `oauthBearerProvider`. kafkajs calls it at every
 * (re)authentication; the token is cached and fetched anew once 80 % of its life has passed (Java's
 * `sasl.login.refresh.window.factor`), so a token is replaced before it expires. The life is the shorter of
 * `expires_in` and the JWT's `exp`; a short-lived token is replaced at least 30 s before it expires (not before half of
 * its life). A refresh that fails while the cached token still has life left keeps that token
 * (and tries again at the next call); without one the failure is thrown.
 *
 * Failures are one line naming the endpoint by `host:port` and what to check, never the secret or the token. A
 * refusal (HTTP 400 / 401 / 403: a wrong client id or secret, an unknown scope) is not retriable; a 5xx, a timeout or
 * an unreachable endpoint is.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ServiceError } from '../errors/index.js';
import { addressOf } from './address-of.js';
import { securityFailure } from './security-failure.js';

/** Where to get tokens and how (the `GAMEDATA_KAFKA_SASL_OAUTHBEARER_*` settings, resolved). */
export interface TokenEndpointOptions {
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL` (`sasl.oauthbearer.token.endpoint.url`). */
  tokenEndpointUrl: string;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID` (`sasl.oauthbearer.client.id`). */
  clientId: string;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET` (`sasl.oauthbearer.client.secret`); a secret. */
  clientSecret: string;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE` (`sasl.oauthbearer.scope`), space-separated. @default none sent */
  scope?: string;
  /** PEM contents of the CA of an `https://` endpoint with a private CA. @default the system CAs */
  ca?: string;
  /** One request's limit. @default 10_000 */
  timeoutMs?: number;
  /** Share of a token's life after which it is replaced. @default 0.8 */
  refreshWindowFactor?: number;
  /** The clock (tests). @default Date.now */
  now?: () => number;
}

/** A token as the endpoint gave it, with when it expires and when to replace it (ms since the epoch). */
interface CachedToken {
  value: string;
  expiresAt: number;
  refreshAt: number;
}

/** What to check when the endpoint refuses. */
const HINT =
  'check GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID, GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET, GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE';
/** A token is replaced at least this long before it expires (when its life allows). */
const REFRESH_MARGIN_MS = 30_000;
/** A token without `expires_in` nor `exp` is fetched again after this long. */
const UNKNOWN_LIFE_MS = 60_000;

/**
 * The kafkajs `oauthBearerProvider` of a token endpoint: a cached token, replaced before it expires.
 * @throws ServiceError (from the provider) when no token can be had; not retriable when the endpoint refused.
 */
export function createTokenEndpointProvider(options: TokenEndpointOptions): () => Promise<{ value: string }> {
  const now = options.now ?? Date.now;
  const factor = options.refreshWindowFactor ?? 0.8;
  let cached: CachedToken | undefined;
  let inFlight: Promise<CachedToken> | undefined;
  const refresh = (): Promise<CachedToken> => {
    inFlight ??= fetchToken(options, now, factor).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  return async () => {
    const t = now();
    if (cached !== undefined && t < cached.refreshAt) return { value: cached.value };
    try {
      cached = await refresh();
    } catch (error) {
      // the endpoint is down or refuses now, but the token we hold is still good: use it, try again next time
      if (cached !== undefined && now() < cached.expiresAt) return { value: cached.value };
      throw error;
    }
    return { value: cached.value };
  };
}

async function fetchToken(
  options: TokenEndpointOptions,
  now: () => number,
  factor: number,
): Promise<CachedToken> {
  const where = `OAuth token endpoint at ${addressOf(options.tokenEndpointUrl)}`;
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (options.scope !== undefined && options.scope !== '') body.set('scope', options.scope);
  const form = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  const basic = Buffer.from(`${form(options.clientId)}:${form(options.clientSecret)}`).toString('base64');
  const started = now();
  let answer: { status: number; text: string };
  try {
    answer = await post(
      options.tokenEndpointUrl,
      body.toString(),
      basic,
      options.ca,
      options.timeoutMs ?? 10_000,
    );
  } catch (error) {
    // a certificate the client does not trust, or not for this name: permanent, one line saying which
    const tls = securityFailure(error, {
      certificate: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION',
      'host name': 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL',
    });
    if (tls !== undefined && (tls.kind === 'certificate' || tls.kind === 'host name'))
      throw new ServiceError(`${where}: ${tls.summary}`, 'kafka', {
        retriable: false,
        security: tls.kind,
        cause: error,
      });
    const e = error as NodeJS.ErrnoException;
    throw new ServiceError(
      `${where} did not answer: ${e.code ?? e.message} (check GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL)`,
      'kafka',
      { retriable: true },
    );
  }
  if (answer.status !== 200) {
    const refused = answer.status >= 400 && answer.status < 500;
    // the error code of RFC 6749 §5.2 (`invalid_client`, `invalid_scope`, ...): a fixed word, never echoed text
    const code = /"error"\s*:\s*"([a-z_]{1,40})"/.exec(answer.text)?.[1];
    throw new ServiceError(
      refused
        ? `${where}: authentication failed (HTTP ${answer.status}${code === undefined ? '' : `, ${code}`}) (${HINT})`
        : `${where} failed (HTTP ${answer.status})`,
      'kafka',
      // A refusal is flagged where it is made (kafkajs keeps this error, which has no cause, in its chain).
      refused ? { retriable: false, security: 'authentication' } : { retriable: true },
    );
  }
  let parsed: { access_token?: unknown; expires_in?: unknown };
  try {
    parsed = JSON.parse(answer.text) as typeof parsed;
  } catch {
    throw new ServiceError(`${where}: the answer is not JSON`, 'kafka', { retriable: false });
  }
  if (typeof parsed.access_token !== 'string' || parsed.access_token === '')
    throw new ServiceError(`${where}: the answer has no access_token`, 'kafka', { retriable: false });
  const lives: number[] = [];
  const expiresIn = Number(parsed.expires_in);
  if (Number.isFinite(expiresIn) && expiresIn > 0) lives.push(started + expiresIn * 1000);
  const exp = jwtExpiry(parsed.access_token);
  if (exp !== undefined) lives.push(exp);
  const expiresAt = lives.length === 0 ? started + UNKNOWN_LIFE_MS : Math.min(...lives);
  const life = Math.max(0, expiresAt - started);
  // at `factor` of the life, and at least REFRESH_MARGIN_MS before expiry (kafkajs re-authenticates a session 10 s
  // before its end: a token with less left would make it re-authenticate at every request), but not before half
  return {
    value: parsed.access_token,
    expiresAt,
    refreshAt: started + Math.min(life * factor, Math.max(life / 2, life - REFRESH_MARGIN_MS)),
  };
}

/** The `exp` claim of a JWT (ms), if the token is one and has it. The token is not verified: the broker does. */
export function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function post(
  url: string,
  body: string,
  basic: string,
  ca: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const https = target.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: timeoutMs,
        ...(https && ca !== undefined ? { ca } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < 1_000_000) text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
