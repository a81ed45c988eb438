/**
 * The schema-registry client (`@confluentinc/schemaregistry`) and the normalisation of its failures.
 *
 * Apicurio's Confluent-compatible API lives under a path (`http://host:port/apis/ccompat/v7`). The library keeps a
 * path in its base URL (axios `baseURL` + relative request paths), so `baseURLs: [url]` works as is and no
 * workaround is needed; the integration tests prove it against the real registry.
 */
import { Agent as HttpsAgent } from 'node:https';
import {
  processSecurity,
  securityFailure,
  addressOf,
  maskWith,
  NO_SECRETS,
} from '../../foundation/config/index.js';
import type { RegistryClientSecurity } from '../../foundation/config/index.js';
import { ConfigError, GamedataError, ServiceError } from '../../foundation/errors/index.js';
import { resolveRetryPolicy, retry } from '../../foundation/retry/index.js';
import type { RetryPolicy } from '../../foundation/retry/index.js';
import {
  requireSchemaRegistryLibrary,
  RestError,
  SchemaRegistryClient,
  type Client,
} from './schema-registry-library.js';

export interface RegistryClientOptions {
  /** Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:18081/apis/ccompat/v7`. Required. */
  url: string;
  /** Timeout of one request (each attempt gets the whole of it). @default 10_000 */
  timeoutMs?: number;
  /**
   * Retries of a call that failed retriably (no answer, timeout, 408, 429 or 5xx), with exponential backoff and full
   * jitter from `retryDelayMs` up to `retryMaxDelayMs` (the project's one retry loop, `src/foundation/retry/`). Deletes are not
   * retried.
   * @default 2
   */
  maxRetries?: number;
  /** Backoff before the first retry, doubling after. @default 200 */
  retryDelayMs?: number;
  /** Ceiling of one backoff. @default 2_000 */
  retryMaxDelayMs?: number;
  /**
   * How long a subject's latest schema is cached by the serializer (`useLatestVersion`), so a newly registered
   * version is picked up without a restart. @default 300
   */
  cacheLatestTtlSecs?: number;
  /**
   * Credentials and TLS: `basicAuthUserInfo` (`user:password`), or `bearerToken`; `ca` (PEM contents) for an https
   * registry with a private CA. `false` = none.
   * @default this process's settings (`GAMEDATA_SCHEMA_REGISTRY_*`, through loadConfig)
   */
  security?: RegistryClientSecurity | false;
}

export const DEFAULT_REGISTRY_CLIENT_OPTIONS = {
  timeoutMs: 10_000,
  maxRetries: 2,
  retryDelayMs: 200,
  retryMaxDelayMs: 2_000,
  cacheLatestTtlSecs: 300,
} as const satisfies Omit<Required<RegistryClientOptions>, 'url' | 'security'>;

/** Client methods that make no registry call (never retried). */
const LOCAL_METHODS: ReadonlySet<PropertyKey> = new Set([
  'config',
  'close',
  'clearCaches',
  'clearLatestCaches',
]);

/**
 * A registry client for `url`: per-request timeout, retries of retriable failures. The library's own retries are
 * off: its retry layer (axios-retry without `shouldResetTimeout`) counts the timeout across all attempts, so a
 * request that timed out was never retried. Errors reach the caller as the library threw them (the last attempt's).
 * @throws ConfigError when `url` is not an http(s) URL or an option is out of range.
 * @throws LibraryPatchError when the installed `@confluentinc/schemaregistry` is not the pinned 1.10.1
 */
export function createRegistryClient(options: RegistryClientOptions): Client {
  requireSchemaRegistryLibrary();
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new ConfigError(
      `schema registry url must be an http(s) URL, got ${maskWith(JSON.stringify(options.url), NO_SECRETS)}`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(
      `schema registry url must be an http(s) URL, got ${maskWith(JSON.stringify(options.url), NO_SECRETS)}`,
    );
  }
  const resolved = { ...DEFAULT_REGISTRY_CLIENT_OPTIONS, ...options };
  if (!Number.isInteger(resolved.maxRetries) || resolved.maxRetries < 0)
    throw new ConfigError(`registry maxRetries must be an integer >= 0, got ${resolved.maxRetries}`);
  if (!(resolved.timeoutMs > 0))
    throw new ConfigError(`registry timeoutMs must be > 0, got ${resolved.timeoutMs}`);
  const url = options.url.replace(/\/+$/, '');
  const security = options.security === false ? {} : (options.security ?? processSecurity().registry);
  const client = new SchemaRegistryClient({
    baseURLs: [url],
    maxRetries: 0,
    cacheLatestTtlSecs: resolved.cacheLatestTtlSecs,
    createAxiosDefaults: {
      timeout: resolved.timeoutMs,
      // A static bearer token as a header (the library's bearer support wants Confluent Cloud's logical cluster).
      ...(security.bearerToken === undefined
        ? {}
        : { headers: { Authorization: `Bearer ${security.bearerToken}` } }),
      ...(security.ca === undefined
        ? {}
        : { httpsAgent: new HttpsAgent({ ca: security.ca, keepAlive: true }) }),
    },
    ...(security.basicAuthUserInfo === undefined
      ? {}
      : {
          basicAuthCredentials: {
            credentialsSource: 'USER_INFO' as const,
            userInfo: security.basicAuthUserInfo,
          },
        }),
  });
  const policy = resolveRetryPolicy({
    retries: resolved.maxRetries,
    initialMs: resolved.retryDelayMs,
    maxMs: resolved.retryMaxDelayMs,
    jitter: 1,
  });
  return withRegistryRetries(client, url, policy);
}

/**
 * `client` with every registry call (all methods but {@link LOCAL_METHODS} and deletes) run through `retry`.
 * Internal calls of the library (one client method calling another) are not retried twice.
 */
export function withRegistryRetries(client: Client, url: string, policy: RetryPolicy): Client {
  return new Proxy(client, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (LOCAL_METHODS.has(key) || String(key).startsWith('delete')) return method.bind(target);
      return async (...args: unknown[]): Promise<unknown> => {
        let last: unknown;
        try {
          return await retry(async () => {
            try {
              return await method.apply(target, args);
            } catch (error) {
              last = error;
              // Only the registry's own failures are retried, by the status they carry.
              throw isRegistryFailure(error)
                ? toRegistryError(error, url, String(key))
                : GamedataError.from(error);
            }
          }, policy);
        } catch (error) {
          throw last ?? error;
        }
      };
    },
  });
}

/** The HTTP status of a registry failure, when the registry answered. */
export function registryStatus(error: unknown): number | undefined {
  if (error instanceof RestError) return error.status;
  const status = (error as { response?: { status?: unknown } } | null)?.response?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Whether an error came from talking to the registry (HTTP or network), as opposed to the value being encoded. */
export function isRegistryFailure(error: unknown): boolean {
  if (error instanceof RestError) return true;
  const e = error as { isAxiosError?: unknown; code?: unknown } | null;
  return e?.isAxiosError === true || (typeof e?.code === 'string' && /^E[A-Z]+/.test(e.code));
}

/**
 * A clear {@link ServiceError} for a failed registry call: unreachable (retriable), 5xx (retriable) or 4xx.
 * `action` says what was being done, e.g. `fetching the latest schema of gamedata.users-value`.
 */
export function toRegistryError(error: unknown, url: string, action: string): ServiceError {
  if (error instanceof ServiceError) return error;
  const status = registryStatus(error);
  // the library's text may quote the URL it called (with the credentials of a `user:password@` URL)
  const detail = maskWith(error instanceof Error ? error.message : String(error), NO_SECRETS);
  // Wrong credentials or certificates: one line naming what failed, not retriable (never the credentials).
  const security = securityFailure(error, REGISTRY_SECURITY_HINTS);
  if (security !== undefined)
    return new ServiceError(
      `schema registry at ${addressOf(url)}: ${security.summary} (while ${action})`,
      'schema-registry',
      {
        cause: error,
        retriable: false,
        security: security.kind,
      },
    );
  if (status === undefined) {
    return new ServiceError(
      `schema registry unreachable at ${addressOf(url)} while ${action}: ${detail}`,
      'schema-registry',
      {
        cause: error,
        retriable: true,
      },
    );
  }
  return new ServiceError(
    `schema registry answered ${status} while ${action}: ${detail}`,
    'schema-registry',
    {
      cause: error,
      retriable: status >= 500 || status === 429 || status === 408,
    },
  );
}

/** What to check, per kind of security failure. */
const REGISTRY_SECURITY_HINTS = {
  authentication: 'GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO or GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN',
  authorisation: "the registry user's permissions",
  certificate: 'GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION',
  'host name': "that SCHEMA_REGISTRY_URL uses a name in the registry's certificate",
  'TLS handshake': 'https:// against a TLS port',
} as const;

/** Whether a registry failure means "no such subject" (Confluent error codes 40401 / 40402, or plain 404). */
export function isSubjectNotFound(error: unknown): boolean {
  if (error instanceof RestError) return error.status === 404;
  return (
    registryStatus(error) === 404 || (error instanceof GamedataError && registryStatus(error.cause) === 404)
  );
}
