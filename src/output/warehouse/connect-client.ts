/**
 * A small Kafka Connect REST client (fetch): create-or-update a connector by name, list connectors with their
 * state, read one connector's status, delete one. Connect answers 409 while its group rebalances and 5xx when a
 * request times out inside the worker: those are retried (the project's one retry helper); every other non-2xx
 * status throws a ServiceError carrying Connect's own message.
 */
import { processSecurity, addressOf, maskWith, NO_SECRETS } from '../../foundation/config/index.js';
import { GamedataError, ServiceError, isRetriableStatus } from '../../foundation/errors/index.js';
import { DEFAULT_RETRY_POLICY, retry as retryCall, type RetryPolicy } from '../../foundation/retry/index.js';
import { fetchTrusting } from './internal/https-fetch.js';

export interface ConnectClientOptions {
  /** REST base URL, e.g. `http://127.0.0.1:18083`. */
  url: string;
  /** Per-request timeout in ms. @default 30000 */
  timeoutMs?: number;
  /** Retries of 409 / 5xx / network failures. @default DEFAULT_RETRY_POLICY with 7 retries (8 attempts in all) */
  retry?: RetryPolicy;
  /** Injected for tests. @default globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * `user:password` for the REST API's HTTP basic auth; `false` = none.
   * @default this process's `GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO` (through loadConfig)
   */
  basicAuthUserInfo?: string | false;
  /**
   * PEM contents of the CA that signed an `https://` worker's certificate (`GAMEDATA_CONNECT_SSL_CA_LOCATION`).
   * @default this process's setting; none = the system CAs
   */
  ca?: string;
  /** Called once with a warning: credentials sent over plain `http://`. @default none */
  onWarning?: (line: string) => void;
}

export const DEFAULT_CONNECT_CLIENT_OPTIONS = {
  timeoutMs: 30_000,
  retry: { ...DEFAULT_RETRY_POLICY, retries: 7 },
} as const;

export type ConnectorState = 'RUNNING' | 'PAUSED' | 'FAILED' | 'UNASSIGNED' | 'RESTARTING' | 'STOPPED';

export interface ConnectorStatus {
  name: string;
  state: ConnectorState;
  tasks: { id: number; state: ConnectorState; trace?: string }[];
}

export interface ConnectorInfo extends ConnectorStatus {
  config: Record<string, string>;
}

export interface ConnectClient {
  /** PUT /connectors/<name>/config: creates the connector or replaces its config. `created` is false for an update. */
  putConnector(name: string, config: Record<string, string>): Promise<{ created: boolean }>;
  /** Every connector with its config and status. */
  listConnectors(): Promise<ConnectorInfo[]>;
  /** The status, or undefined when no connector has that name. */
  connectorStatus(name: string): Promise<ConnectorStatus | undefined>;
  /** DELETE /connectors/<name>; false when there was none. */
  deleteConnector(name: string): Promise<boolean>;
  /** Connector and transform classes the worker can load. */
  pluginClasses(): Promise<string[]>;
  /**
   * POST /connectors/<name>/restart?includeTasks=true&onlyFailed=true: restarts the connector's failed instances
   * (a failed task stays failed until restarted). false when there was no connector of that name.
   */
  restartFailed(name: string): Promise<boolean>;
}

interface StatusBody {
  name: string;
  connector: { state: ConnectorState };
  tasks: { id: number; state: ConnectorState; trace?: string }[];
}

const toStatus = (s: StatusBody): ConnectorStatus => ({
  name: s.name,
  state: s.connector.state,
  tasks: s.tasks.map((t) => ({
    id: t.id,
    state: t.state,
    ...(t.trace === undefined ? {} : { trace: t.trace }),
  })),
});

export function createConnectClient(options: ConnectClientOptions): ConnectClient {
  const base = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONNECT_CLIENT_OPTIONS.timeoutMs;
  const retry = options.retry ?? DEFAULT_CONNECT_CLIENT_OPTIONS.retry;
  const ca = options.ca ?? processSecurity().connectCa;
  const doFetch = ca === undefined ? (options.fetch ?? globalThis.fetch) : fetchTrusting(ca, options.fetch);
  const userInfo =
    options.basicAuthUserInfo === false
      ? undefined
      : (options.basicAuthUserInfo ?? processSecurity().connectBasicAuthUserInfo);
  const auth: Record<string, string> =
    userInfo === undefined ? {} : { authorization: `Basic ${Buffer.from(userInfo).toString('base64')}` };
  // errors name the address, never the URL (it may carry `user:password@`)
  const address = addressOf(base);
  const credentialsInUrl = /^https?:\/\/[^/]*@/.test(base);
  // (a URL's own user:password@ is never sent: refused below, with no warning)
  if (base.startsWith('http:') && userInfo !== undefined)
    options.onWarning?.(
      `Kafka Connect at ${address}: credentials go over plain http:// (readable on the network); use https:// (GAMEDATA_CONNECT_SSL_CA_LOCATION for a private CA)`,
    );

  const target: ConnectTarget = { base, address, doFetch, auth, timeoutMs };

  /** One request with retries; resolves to [status, parsed body] for 2xx and for the statuses in `accept`. */
  async function request(
    method: string,
    path: string,
    body?: unknown,
    accept: readonly number[] = [],
  ): Promise<[number, unknown]> {
    // fetch refuses a URL with `user:password@` (it would never send them): one line at once, not a retry loop
    if (credentialsInUrl)
      throw new ServiceError(
        `Kafka Connect at ${address}: CONNECT_URL carries credentials (user:password@), which are never sent; put them in GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO`,
        'kafka-connect',
        { retriable: false },
      );
    // every failure leaves as a GamedataError (a body read cut short is a TypeError or an AbortError)
    const attempt = (): Promise<[number, unknown]> =>
      requestOnce(target, method, path, body, accept).catch((error: unknown) => {
        throw GamedataError.from(error);
      });
    return retryCall(attempt, retry);
  }

  return {
    async putConnector(name, config) {
      const [status] = await request('PUT', `/connectors/${encodeURIComponent(name)}/config`, config);
      return { created: status === 201 };
    },
    async listConnectors() {
      const [, body] = await request('GET', '/connectors?expand=status&expand=info');
      const entries = Object.values(
        (body ?? {}) as Record<string, { status: StatusBody; info: { config: Record<string, string> } }>,
      );
      return entries
        .map((e) => ({ ...toStatus(e.status), config: e.info.config }))
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    async connectorStatus(name) {
      const [status, body] = await request(
        'GET',
        `/connectors/${encodeURIComponent(name)}/status`,
        undefined,
        [404],
      );
      return status === 404 ? undefined : toStatus(body as StatusBody);
    },
    async deleteConnector(name) {
      const [status] = await request('DELETE', `/connectors/${encodeURIComponent(name)}`, undefined, [404]);
      return status !== 404;
    },
    async pluginClasses() {
      const [, body] = await request('GET', '/connector-plugins?connectorsOnly=false');
      return ((body ?? []) as { class: string }[]).map((p) => p.class);
    },
    async restartFailed(name) {
      const [status] = await request(
        'POST',
        `/connectors/${encodeURIComponent(name)}/restart?includeTasks=true&onlyFailed=true`,
        undefined,
        [404],
      );
      return status !== 404;
    },
  };
}

/** Where and how one client's requests go. */
interface ConnectTarget {
  base: string;
  /** The host and port, for errors (never the URL: it may carry `user:password@`). */
  address: string;
  doFetch: typeof fetch;
  auth: Record<string, string>;
  timeoutMs: number;
}

/** One attempt of a request: [status, parsed body] for 2xx and for the statuses in `accept`, else a ServiceError. */
async function requestOnce(
  target: ConnectTarget,
  method: string,
  path: string,
  body: unknown,
  accept: readonly number[],
): Promise<[number, unknown]> {
  const { address, auth } = target;
  let response: Response;
  try {
    response = await target.doFetch(`${target.base}${path}`, {
      method,
      headers: { accept: 'application/json', 'content-type': 'application/json', ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (error) {
    throw new ServiceError(
      `Kafka Connect at ${address} did not answer ${method} ${path}: ${maskWith(GamedataError.from(error).message, NO_SECRETS)}`,
      'kafka-connect',
      { cause: error, retriable: true },
    );
  }
  const text = await response.text();
  const parsed: unknown = text === '' ? undefined : safeJson(text);
  if (response.ok || accept.includes(response.status)) return [response.status, parsed];
  // wrong or missing credentials: one line, not retried (never the credentials)
  if (response.status === 401 || response.status === 403)
    throw new ServiceError(
      `Kafka Connect at ${address}: ${response.status === 401 ? 'authentication failed (HTTP 401)' : 'not authorised (HTTP 403)'} (check GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO)`,
      'kafka-connect',
      { retriable: false, security: response.status === 401 ? 'authentication' : 'authorisation' },
    );
  const message =
    typeof parsed === 'object' && parsed !== null && 'message' in parsed
      ? String(parsed.message)
      : text.slice(0, 500);
  throw new ServiceError(
    `Kafka Connect at ${address}: ${method} ${path} answered ${response.status}: ${maskWith(message, NO_SECRETS)}`,
    'kafka-connect',
    { retriable: isRetriableStatus(response.status) },
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
