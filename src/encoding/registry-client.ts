/**
 * The schema-registry client (`@confluentinc/schemaregistry`) and the normalisation of its failures.
 *
 * Apicurio's Confluent-compatible API lives under a path (`http://host:port/apis/ccompat/v7`). The library keeps a
 * path in its base URL (axios `baseURL` + relative request paths), so `baseURLs: [url]` works as is and no
 * workaround is needed; the integration tests prove it against the real registry.
 */
// Deep imports: the library's index loads every KMS SDK (AWS, Azure, GCP, Vault), ~1 s of start-up we never use.
import { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';
import { SchemaRegistryClient } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import type { Client } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { ConfigError, GamedataError, ServiceError } from '../errors.js';

export interface RegistryClientOptions {
  /** Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:18081/apis/ccompat/v7`. Required. */
  url: string;
  /** Per-request timeout. @default 10_000 */
  timeoutMs?: number;
  /** Retries of failed requests inside the library. @default 2 */
  maxRetries?: number;
  /**
   * How long a subject's latest schema is cached by the serializer (`useLatestVersion`), so a newly registered
   * version is picked up without a restart. @default 300
   */
  cacheLatestTtlSecs?: number;
}

export const DEFAULT_REGISTRY_CLIENT_OPTIONS = {
  timeoutMs: 10_000,
  maxRetries: 2,
  cacheLatestTtlSecs: 300,
} as const satisfies Omit<Required<RegistryClientOptions>, 'url'>;

/**
 * A registry client for `url`.
 * @throws ConfigError when `url` is not an http(s) URL.
 */
export function createRegistryClient(options: RegistryClientOptions): Client {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new ConfigError(`schema registry url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`schema registry url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  const resolved = { ...DEFAULT_REGISTRY_CLIENT_OPTIONS, ...options };
  return new SchemaRegistryClient({
    baseURLs: [options.url.replace(/\/+$/, '')],
    maxRetries: resolved.maxRetries,
    retriesWaitMs: 200,
    retriesMaxWaitMs: 2_000,
    cacheLatestTtlSecs: resolved.cacheLatestTtlSecs,
    createAxiosDefaults: { timeout: resolved.timeoutMs },
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
  const detail = error instanceof Error ? error.message : String(error);
  if (status === undefined) {
    return new ServiceError(
      `schema registry unreachable at ${url} while ${action}: ${detail}`,
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
      retriable: status >= 500 || status === 429,
    },
  );
}

/** Whether a registry failure means "no such subject" (Confluent error codes 40401 / 40402, or plain 404). */
export function isSubjectNotFound(error: unknown): boolean {
  if (error instanceof RestError) return error.status === 404;
  return (
    registryStatus(error) === 404 || (error instanceof GamedataError && registryStatus(error.cause) === 404)
  );
}
