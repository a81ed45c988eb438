/**
 * The one place settings are read and validated: environment variables, an optional JSON config file and explicit
 * overrides (CLI flags), merged once at start. Every invalid or missing setting is reported together in one
 * ConfigError, each issue naming the setting (as its environment variable), the rule and the value received
 * (secrets are never echoed).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { SHORT_PAGES, type ShortPages } from '../models/short-pages.js';
import {
  checkSecuritySettings,
  DEFAULT_SECURITY_SETTINGS,
  SECRET_SETTINGS,
  SECURITY_ENV_NAMES,
  SECURITY_FIELD_SCHEMAS,
  type SecuritySettings,
} from './security-settings.js';
import { toDurationMs } from './duration.js';
import { DEFAULT_SCHEMA_CONTRACTS, parseSchemaContracts } from './schema-contract.js';
import type { SchemaContracts } from './schema-contract.js';

/** The validated settings. Flat, named after the environment variables they come from. */
/** The validated settings (the security ones: see {@link SecuritySettings}). */
export interface GamedataConfig extends SecuritySettings {
  /** `GAMEDATA_API_URL`: the upstream tRPC endpoint (ends in `/trpc`). Undefined = not configured. */
  apiUrl: string | undefined;
  /** `GAMEDATA_API_KEY`: sent to the upstream; redacted from every log line and error. */
  apiKey: string | undefined;
  /** `KAFKA_BROKERS`: comma-separated `host:port`. Empty = not configured. */
  kafkaBrokers: string[];
  /** `SCHEMA_REGISTRY_URL`: Confluent-compatible base URL (no trailing slash). Undefined = not configured. */
  schemaRegistryUrl: string | undefined;
  /** `REDIS_URL`: `redis://` or `rediss://`. Undefined = not configured. */
  redisUrl: string | undefined;
  /** `GAMEDATA_TOPIC_PREFIX`: topics are `<prefix>.<resource>`. @default 'gamedata' */
  topicPrefix: string;
  /** `GAMEDATA_QUEUE_PREFIX`: BullMQ key prefix. @default 'gamedata-bull' */
  queuePrefix: string;
  /** `GAMEDATA_REDIS_PREFIX`: prefix of the dedup, cache and counter keys. @default 'gamedata' */
  redisPrefix: string;
  /** `GAMEDATA_LOG_LEVEL`. @default 'info' */
  logLevel: LogLevel;
  /** `CONNECT_URL`: Kafka Connect REST base URL (`gamedata connect`). Undefined = not configured. */
  connectUrl: string | undefined;
  /** `WAREHOUSE_URL`: `postgresql://user:password@host:port/db`, the sink's database. Undefined = not configured. */
  warehouseUrl: string | undefined;
  /** `CONNECT_WAREHOUSE_URL`: the same database as Connect reaches it (containers). @default WAREHOUSE_URL */
  connectWarehouseUrl: string | undefined;
  /**
   * `GAMEDATA_METRICS_PORT`: a worker's `/metrics` port; 0 = any free port, false (`off`) = no endpoint.
   * Undefined = the worker's default, 9464 (`DEFAULT_WORKER_TELEMETRY_OPTIONS.metricsPort`).
   */
  metricsPort: number | false | undefined;
  /**
   * `GAMEDATA_METRICS_HOST`: the address `/metrics` binds to (`0.0.0.0` lets another machine scrape).
   * Undefined = the worker's default, 127.0.0.1 (`DEFAULT_WORKER_TELEMETRY_OPTIONS.metricsHost`).
   */
  metricsHost: string | undefined;
  /**
   * `GAMEDATA_DELIVERY`: how workers publish. `exactly-once`: a slice's pages, dead letters and checkpoint commit
   * in one Kafka transaction per few pages, so read_committed consumers read every record once, even after crashes;
   * `at-least-once`: idempotent sends per page (a crash between the ack and the seen mark republishes that page).
   * @default 'exactly-once'
   */
  delivery: DeliveryMode;
  /**
   * `GAMEDATA_SHORT_PAGES`: what an upstream page with fewer items than asked for means. `end`: nothing is older, the
   * read stops; `confirm`: one page more is read, to an empty one (one call more per read: about half of a full
   * history's calls at scale small and medium). `gamedata verify` always confirms. @default 'end'
   */
  shortPages: ShortPages;
  /**
   * `GAMEDATA_TRANSACTION_LINGER`: exactly-once only: how long a worker's shared transaction waits for more of its
   * slices' commits before it starts (as a producer's linger.ms: fewer, larger transactions, less work for the
   * brokers; a page's commit waits up to this long). A duration: `25ms`, `0` (start at once). @default 25
   */
  transactionLingerMs: number;
  /**
   * `GAMEDATA_MAX_RESPONSE_BYTES`: the largest upstream answer read, in bytes (issue 48): a larger one is cut off and
   * is a retriable error, so one huge answer cannot exhaust the fetcher that serves the whole key. At least 65 536.
   * @default 67108864 (64 MiB: a full 50-call batch of 100-article pages with their bodies fits)
   */
  maxResponseBytes: number;
  /**
   * `GAMEDATA_GIVE_UP_AFTER`: how long a worker keeps retrying a service (Kafka, the registry, Redis) that stays
   * unreachable before it exits non-zero (`--give-up-after`). A duration: `90s`, `5m`, `1h`, `1d`, `500ms` (a bare
   * number is milliseconds). @default 300_000 (5 min)
   */
  giveUpAfterMs: number;
  /**
   * `GAMEDATA_SCHEMA_CONTRACT`: what the encoder does with fields the catalogue does not know, per resource:
   * `freeze` keeps them in `_extra` (and they are counted as drift and alerted on), `discard` counts then drops
   * them. `transactions=freeze,articles=discard`; resources not named are `freeze`. @default every resource `freeze`
   */
  schemaContracts: SchemaContracts;
  /**
   * `GAMEDATA_DRAIN_TIMEOUT`: how long a worker may take to drain after SIGTERM/SIGINT before it exits anyway
   * (`--drain-timeout`). A duration, as above. @default 30_000 (30 s)
   */
  drainTimeoutMs: number;
  /** `GAMEDATA_RETENTION_AGE`: finished runs (state, counters, BullMQ jobs) older than this are trimmed, in ms. @default 604800000 (7d) */
  retentionAgeMs: number;
  /** `GAMEDATA_RETENTION_RUNS`: at most this many runs (and finished jobs per queue) are kept. @default 20000 */
  retentionRuns: number;
}

/** How workers publish (`GAMEDATA_DELIVERY`). */
export type DeliveryMode = 'exactly-once' | 'at-least-once';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The services a command needs; each one named here must be configured, else loadConfig throws. */
export type ConfigNeed = 'api' | 'kafka' | 'registry' | 'redis';

/** The config with the needed settings typed as present. */
export type ConfigWith<N extends ConfigNeed> = GamedataConfig &
  ('api' extends N ? { apiUrl: string } : unknown) &
  ('registry' extends N ? { schemaRegistryUrl: string } : unknown) &
  ('redis' extends N ? { redisUrl: string } : unknown);

/** Settings as they can appear in a config file or in `overrides` (camelCase keys of {@link GamedataConfig}). */
export interface ConfigInput {
  apiUrl?: string | undefined;
  apiKey?: string | undefined;
  /** A comma-separated string or an array of `host:port`. */
  kafkaBrokers?: string | string[] | undefined;
  schemaRegistryUrl?: string | undefined;
  redisUrl?: string | undefined;
  topicPrefix?: string | undefined;
  queuePrefix?: string | undefined;
  redisPrefix?: string | undefined;
  logLevel?: string | undefined;
  connectUrl?: string | undefined;
  warehouseUrl?: string | undefined;
  connectWarehouseUrl?: string | undefined;
  /** A port number, or `'off'` / `false` for no endpoint. */
  metricsPort?: number | string | false | undefined;
  metricsHost?: string | undefined;
  delivery?: string | undefined;
  shortPages?: string | undefined;
  /** A duration (`25ms`, `0`): milliseconds as a number, or a string. */
  transactionLingerMs?: number | string | undefined;
  /** Bytes: a number, or a string of digits. */
  maxResponseBytes?: number | string | undefined;
  /** A duration: milliseconds as a number, or a string such as `10s`, `5m`, `1h`, `1d`, `250ms`. */
  giveUpAfterMs?: number | string | undefined;
  /** `resource=contract,...` as a string. */
  schemaContracts?: string | undefined;
  /** A duration, as `giveUpAfterMs`. */
  drainTimeoutMs?: number | string | undefined;
  /** A duration (`7d`, `12h`, `90m`) or a number of ms. */
  retentionAgeMs?: string | number | undefined;
  retentionRuns?: string | number | undefined;
  // security (security-settings.ts): strings as in the environment
  kafkaSecurityProtocol?: string | undefined;
  kafkaSaslMechanism?: string | undefined;
  kafkaSaslUsername?: string | undefined;
  kafkaSaslPassword?: string | undefined;
  kafkaSslCaLocation?: string | undefined;
  kafkaSslCertificateLocation?: string | undefined;
  kafkaSslKeyLocation?: string | undefined;
  kafkaSslKeyPassword?: string | undefined;
  schemaRegistryBasicAuthUserInfo?: string | undefined;
  schemaRegistryBearerToken?: string | undefined;
  schemaRegistrySslCaLocation?: string | undefined;
  redisTlsCaLocation?: string | undefined;
  connectBasicAuthUserInfo?: string | undefined;
  connectSecretsFile?: string | undefined;
  kafkaSaslOauthbearerTokenFile?: string | undefined;
  kafkaSaslOauthbearerTokenEndpointUrl?: string | undefined;
  kafkaSaslOauthbearerClientId?: string | undefined;
  kafkaSaslOauthbearerClientSecret?: string | undefined;
  kafkaSaslOauthbearerScope?: string | undefined;
  kafkaSaslOauthbearerTokenEndpointCaLocation?: string | undefined;
  connectSslCaLocation?: string | undefined;
}

export interface LoadConfigOptions<N extends ConfigNeed = never> {
  /** Services that must be configured. @default [] */
  need?: readonly N[];
  /** Where environment variables are read. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * A JSON file with {@link ConfigInput} keys. Environment variables win over it; `overrides` win over both.
   * @default env GAMEDATA_CONFIG, else none
   */
  configFile?: string;
  /** Highest-precedence values (CLI flags). Undefined entries are ignored. */
  overrides?: ConfigInput;
}

/** Defaults of the optional settings. */
export const DEFAULT_CONFIG = {
  topicPrefix: 'gamedata',
  queuePrefix: 'gamedata-bull',
  redisPrefix: 'gamedata',
  logLevel: 'info',
  delivery: 'exactly-once',
  shortPages: 'end',
  transactionLingerMs: 25,
  maxResponseBytes: 64 * 1024 * 1024,
  giveUpAfterMs: 300_000,
  drainTimeoutMs: 30_000,
  retentionAgeMs: 7 * 86_400_000,
  retentionRuns: 20_000,
} as const satisfies Partial<GamedataConfig>;

/** Each setting's environment variable: also the name issues use. */
export const CONFIG_ENV_NAMES = {
  apiUrl: 'GAMEDATA_API_URL',
  apiKey: 'GAMEDATA_API_KEY',
  kafkaBrokers: 'KAFKA_BROKERS',
  schemaRegistryUrl: 'SCHEMA_REGISTRY_URL',
  redisUrl: 'REDIS_URL',
  topicPrefix: 'GAMEDATA_TOPIC_PREFIX',
  queuePrefix: 'GAMEDATA_QUEUE_PREFIX',
  redisPrefix: 'GAMEDATA_REDIS_PREFIX',
  logLevel: 'GAMEDATA_LOG_LEVEL',
  connectUrl: 'CONNECT_URL',
  warehouseUrl: 'WAREHOUSE_URL',
  connectWarehouseUrl: 'CONNECT_WAREHOUSE_URL',
  metricsPort: 'GAMEDATA_METRICS_PORT',
  metricsHost: 'GAMEDATA_METRICS_HOST',
  delivery: 'GAMEDATA_DELIVERY',
  shortPages: 'GAMEDATA_SHORT_PAGES',
  transactionLingerMs: 'GAMEDATA_TRANSACTION_LINGER',
  maxResponseBytes: 'GAMEDATA_MAX_RESPONSE_BYTES',
  giveUpAfterMs: 'GAMEDATA_GIVE_UP_AFTER',
  schemaContracts: 'GAMEDATA_SCHEMA_CONTRACT',
  drainTimeoutMs: 'GAMEDATA_DRAIN_TIMEOUT',
  retentionAgeMs: 'GAMEDATA_RETENTION_AGE',
  retentionRuns: 'GAMEDATA_RETENTION_RUNS',
  ...SECURITY_ENV_NAMES,
} as const satisfies Record<keyof GamedataConfig, string>;

type Key = keyof typeof CONFIG_ENV_NAMES;
const KEYS = Object.keys(CONFIG_ENV_NAMES) as Key[];
// The one list of secrets (security-settings.ts): values are never echoed, URLs are echoed with the password masked.
const SECRET_KEYS: ReadonlySet<Key> = new Set<Key>(SECRET_SETTINGS.values);
const SECRET_URL_KEYS: ReadonlySet<Key> = new Set<Key>(SECRET_SETTINGS.urls);
const NEED_KEYS: Record<ConfigNeed, Key> = {
  api: 'apiUrl',
  kafka: 'kafkaBrokers',
  registry: 'schemaRegistryUrl',
  redis: 'redisUrl',
};
const NEED_EXAMPLES: Record<ConfigNeed, string> = {
  api: 'e.g. http://127.0.0.1:4000/trpc',
  kafka: 'e.g. 127.0.0.1:19092',
  registry: 'e.g. http://127.0.0.1:18081/apis/ccompat/v7',
  redis: 'e.g. redis://127.0.0.1:16379',
};

const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .refine((value) => isUrl(value, ['http:', 'https:']), `must be an http(s) URL (${what})`)
    .transform((value) => value.replace(/\/+$/, ''));
// Kafka's legal topic characters; the prefix leaves room for `.<resource>.dlq` under the 249-character limit.
const namePrefix = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ -');
const brokerList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) =>
    (Array.isArray(value) ? value : value.split(','))
      .map((broker) => broker.trim())
      .filter((broker) => broker !== ''),
  )
  .refine(
    (brokers) => brokers.every(isHostPort),
    'must be a comma-separated list of host:port (port 1-65535)',
  );

const postgresUrl = z
  .string()
  .trim()
  .refine(
    (value) => isUrl(value, ['postgresql:', 'postgres:']),
    'must be a postgresql://user:password@host:port/database URL',
  );

// A port, or off: `0` = any free port; `off`/`false` (or JSON false) = no endpoint.
const metricsPort = z
  .union([z.number(), z.string(), z.literal(false)])
  .transform((value) => (typeof value === 'string' ? value.trim() : value))
  .refine(
    (value) =>
      value === false ||
      value === 'off' ||
      value === 'false' ||
      (Number.isInteger(Number(value)) && Number(value) >= 0 && Number(value) <= 65535 && value !== ''),
    'must be 0..65535 or off',
  )
  .transform((value): number | false =>
    value === false || value === 'off' || value === 'false' ? false : Number(value),
  );

// A positive duration (config/duration.ts), in milliseconds: the worker's give-up and drain deadlines.
const positiveDuration = z
  .union([z.number(), z.string()])
  .transform((value) => toDurationMs(value) ?? Number.NaN)
  .refine((ms) => ms > 0, 'must be a positive duration such as 30s, 5m, 1h, 1d or 500ms');

// The shared transactions' linger: 0 up to 1 s (a page's commit waits up to this long).
const transactionLinger = z
  .union([z.number(), z.string()])
  .transform((value) => toDurationMs(value) ?? Number.NaN)
  .refine(
    (ms) => Number.isInteger(ms) && ms >= 0 && ms <= 1000,
    'must be a duration from 0 to 1s, such as 25ms (a bare number is milliseconds)',
  );

// Retention: a duration (`7d`, `12h`, `30m`, `90s`, or ms) of at least a minute; a run count of at least 10.
const retentionAge = z
  .union([z.number(), z.string()])
  .transform((value) => toDurationMs(value) ?? Number.NaN)
  .refine(
    (ms) => Number.isFinite(ms) && ms >= 60_000,
    'must be a duration of at least 1m, like 7d, 12h or 90m (or a number of ms)',
  );
const retentionRuns = z
  .union([z.number(), z.string()])
  .transform((value) => (typeof value === 'string' && value.trim() === '' ? Number.NaN : Number(value)))
  .refine((n) => Number.isSafeInteger(n) && n >= 10, 'must be an integer >= 10');

const FIELD_SCHEMAS = {
  apiUrl: httpUrl('the upstream tRPC endpoint, e.g. http://127.0.0.1:4000/trpc'),
  apiKey: z.string().trim().min(1, 'must not be empty'),
  kafkaBrokers: brokerList,
  schemaRegistryUrl: httpUrl('e.g. http://127.0.0.1:18081/apis/ccompat/v7'),
  redisUrl: z
    .string()
    .trim()
    .refine((value) => isUrl(value, ['redis:', 'rediss:']), 'must be a redis:// or rediss:// URL'),
  topicPrefix: namePrefix,
  queuePrefix: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ - (no ":")'),
  redisPrefix: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ - :'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  connectUrl: httpUrl('the Kafka Connect REST API, e.g. http://127.0.0.1:18083'),
  warehouseUrl: postgresUrl,
  connectWarehouseUrl: postgresUrl,
  metricsPort,
  metricsHost: z.string().trim().min(1, 'must not be empty'),
  delivery: z.enum(['exactly-once', 'at-least-once']),
  shortPages: z.enum(SHORT_PAGES),
  transactionLingerMs: transactionLinger,
  maxResponseBytes: z
    .union([z.number(), z.string()])
    .transform((value) =>
      typeof value === 'string' && !/^\s*\d+\s*$/.test(value) ? Number.NaN : Number(value),
    )
    .refine((n) => Number.isSafeInteger(n) && n >= 65_536, 'must be a whole number of bytes, at least 65536'),
  giveUpAfterMs: positiveDuration,
  schemaContracts: z.string().transform((text, ctx) => {
    try {
      return parseSchemaContracts(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  }),
  drainTimeoutMs: positiveDuration,
  retentionAgeMs: retentionAge,
  retentionRuns,
  ...SECURITY_FIELD_SCHEMAS,
} satisfies Record<Key, z.ZodType>;

/**
 * Reads and validates every setting once.
 *
 * Precedence, highest first: `overrides`, environment variables, the config file, {@link DEFAULT_CONFIG}.
 * An empty environment variable counts as unset.
 *
 * @throws ConfigError listing every problem at once (`issues`: one line per setting).
 * @example
 * const config = loadConfig({ need: ['kafka', 'registry', 'redis'] });
 * config.schemaRegistryUrl; // string (guaranteed by `need`)
 */
export function loadConfig<const N extends ConfigNeed = never>(
  options: LoadConfigOptions<N> = {},
): ConfigWith<N> {
  const env = options.env ?? process.env;
  const issues: string[] = [];

  const filePath = options.configFile ?? nonEmpty(env['GAMEDATA_CONFIG']);
  const fromFile = filePath === undefined ? {} : readConfigFile(filePath, issues);

  const { raw, origin } = mergeSources(options.overrides, env, fromFile, filePath);
  const values = parseSettings(raw, origin, issues);

  for (const need of options.need ?? []) {
    const key = NEED_KEYS[need];
    const present =
      key === 'kafkaBrokers'
        ? Array.isArray(values[key]) && values[key].length > 0
        : values[key] !== undefined;
    // an invalid value was already reported above
    if (!present && raw[key] === undefined)
      issues.push(`${CONFIG_ENV_NAMES[key]} is not set (${NEED_EXAMPLES[need]})`);
    else if (!present && key === 'kafkaBrokers' && !issues.some((i) => i.startsWith(CONFIG_ENV_NAMES[key]))) {
      issues.push(`${CONFIG_ENV_NAMES[key]} is empty (${NEED_EXAMPLES[need]})`);
    }
  }

  const security = securityOf(values);
  issues.push(
    ...checkSecuritySettings(security, {
      schemaRegistryUrl: values.schemaRegistryUrl as string | undefined,
      redisUrl: values.redisUrl as string | undefined,
      connectUrl: values.connectUrl as string | undefined,
      given: new Set(KEYS.filter((key) => raw[key] !== undefined)),
    }),
  );

  if (issues.length > 0) {
    // One problem: one line. Several: one line each, under a count.
    throw new ConfigError(
      issues.length === 1
        ? `invalid configuration: ${issues[0]}`
        : `invalid configuration (${issues.length} problems):\n  ${issues.join('\n  ')}`,
      issues,
    );
  }

  // `need` was checked above, so the narrowed type holds.
  return configOf(values, security) as ConfigWith<N>;
}

/** Each setting's raw value from the source that wins for it (overrides, env, then the file), and which one. */
function mergeSources(
  overrides: ConfigInput | undefined,
  env: NodeJS.ProcessEnv,
  fromFile: Partial<Record<Key, unknown>>,
  filePath: string | undefined,
): { raw: Partial<Record<Key, unknown>>; origin: Partial<Record<Key, string>> } {
  const raw: Partial<Record<Key, unknown>> = {};
  const origin: Partial<Record<Key, string>> = {};
  for (const key of KEYS) {
    const override = overrides?.[key];
    const envValue = nonEmpty(env[CONFIG_ENV_NAMES[key]]);
    if (override !== undefined) {
      raw[key] = override;
      origin[key] = 'override';
    } else if (envValue !== undefined) {
      raw[key] = envValue;
      origin[key] = 'env';
    } else if (fromFile[key] !== undefined) {
      raw[key] = fromFile[key];
      origin[key] = `file ${filePath}`;
    }
  }
  return { raw, origin };
}

/** The set settings validated by their schemas; each invalid one adds an issue (its value shown unless secret). */
function parseSettings(
  raw: Partial<Record<Key, unknown>>,
  origin: Partial<Record<Key, string>>,
  issues: string[],
): Partial<Record<Key, unknown>> {
  const values: Partial<Record<Key, unknown>> = {};
  for (const key of KEYS) {
    if (raw[key] === undefined) continue;
    const parsed = FIELD_SCHEMAS[key].safeParse(raw[key]);
    if (parsed.success) {
      values[key] = parsed.data;
    } else {
      const rule = parsed.error.issues.map((issue) => issue.message).join('; ');
      const shown = SECRET_KEYS.has(key)
        ? '[REDACTED]'
        : SECRET_URL_KEYS.has(key)
          ? JSON.stringify(maskUrlPassword(raw[key]))
          : JSON.stringify(raw[key]);
      issues.push(`${CONFIG_ENV_NAMES[key]} (${origin[key] ?? 'unknown'}): ${rule}; got ${shown}`);
    }
  }
  return values;
}

/** The config out of valid parsed values, with {@link DEFAULT_CONFIG} for the optional settings left unset. */
function configOf(values: Partial<Record<Key, unknown>>, security: SecuritySettings): GamedataConfig {
  return {
    apiUrl: values.apiUrl as string | undefined,
    apiKey: values.apiKey as string | undefined,
    kafkaBrokers: (values.kafkaBrokers as string[] | undefined) ?? [],
    schemaRegistryUrl: values.schemaRegistryUrl as string | undefined,
    redisUrl: values.redisUrl as string | undefined,
    topicPrefix: (values.topicPrefix as string | undefined) ?? DEFAULT_CONFIG.topicPrefix,
    queuePrefix: (values.queuePrefix as string | undefined) ?? DEFAULT_CONFIG.queuePrefix,
    redisPrefix: (values.redisPrefix as string | undefined) ?? DEFAULT_CONFIG.redisPrefix,
    logLevel: (values.logLevel as LogLevel | undefined) ?? DEFAULT_CONFIG.logLevel,
    connectUrl: values.connectUrl as string | undefined,
    warehouseUrl: values.warehouseUrl as string | undefined,
    connectWarehouseUrl: (values.connectWarehouseUrl ?? values.warehouseUrl) as string | undefined,
    metricsPort: values.metricsPort as number | false | undefined,
    metricsHost: values.metricsHost as string | undefined,
    delivery: (values.delivery as DeliveryMode | undefined) ?? DEFAULT_CONFIG.delivery,
    shortPages: (values.shortPages as ShortPages | undefined) ?? DEFAULT_CONFIG.shortPages,
    transactionLingerMs:
      (values.transactionLingerMs as number | undefined) ?? DEFAULT_CONFIG.transactionLingerMs,
    maxResponseBytes: (values.maxResponseBytes as number | undefined) ?? DEFAULT_CONFIG.maxResponseBytes,
    giveUpAfterMs: (values.giveUpAfterMs as number | undefined) ?? DEFAULT_CONFIG.giveUpAfterMs,
    schemaContracts: (values.schemaContracts as SchemaContracts | undefined) ?? DEFAULT_SCHEMA_CONTRACTS,
    drainTimeoutMs: (values.drainTimeoutMs as number | undefined) ?? DEFAULT_CONFIG.drainTimeoutMs,
    retentionAgeMs: (values.retentionAgeMs as number | undefined) ?? DEFAULT_CONFIG.retentionAgeMs,
    retentionRuns: (values.retentionRuns as number | undefined) ?? DEFAULT_CONFIG.retentionRuns,
    ...security,
  };
}

/** Reads a JSON config file; problems are added to `issues` (so they are reported with everything else). */
function readConfigFile(path: string, issues: string[]): Partial<Record<Key, unknown>> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    issues.push(
      `GAMEDATA_CONFIG: cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
    return {};
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the error (a password with it): say where, never what
    issues.push(`GAMEDATA_CONFIG: config file ${path} is not valid JSON (${jsonErrorPlace(error, text)})`);
    return {};
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    issues.push(`GAMEDATA_CONFIG: config file ${path} must hold a JSON object`);
    return {};
  }
  const result: Partial<Record<Key, unknown>> = {};
  for (const [name, value] of Object.entries(data)) {
    if ((KEYS as string[]).includes(name)) result[name as Key] = value;
    // a typo in a file would otherwise silently fall back to a default
    else issues.push(`GAMEDATA_CONFIG: unknown setting "${name}" in ${path} (known: ${KEYS.join(', ')})`);
  }
  return result;
}

// The security settings out of the parsed values (defaults applied).
function securityOf(values: Partial<Record<Key, unknown>>): SecuritySettings {
  const pick = <K extends keyof SecuritySettings>(key: K): SecuritySettings[K] =>
    values[key] as SecuritySettings[K];
  return {
    kafkaSecurityProtocol: pick('kafkaSecurityProtocol') ?? DEFAULT_SECURITY_SETTINGS.kafkaSecurityProtocol,
    kafkaSaslMechanism: pick('kafkaSaslMechanism'),
    kafkaSaslUsername: pick('kafkaSaslUsername'),
    kafkaSaslOauthbearerTokenFile: pick('kafkaSaslOauthbearerTokenFile'),
    kafkaSaslOauthbearerTokenEndpointUrl: pick('kafkaSaslOauthbearerTokenEndpointUrl'),
    kafkaSaslOauthbearerClientId: pick('kafkaSaslOauthbearerClientId'),
    kafkaSaslOauthbearerClientSecret: pick('kafkaSaslOauthbearerClientSecret'),
    kafkaSaslOauthbearerScope: pick('kafkaSaslOauthbearerScope'),
    kafkaSaslOauthbearerTokenEndpointCaLocation: pick('kafkaSaslOauthbearerTokenEndpointCaLocation'),
    kafkaSaslPassword: pick('kafkaSaslPassword'),
    kafkaSslCaLocation: pick('kafkaSslCaLocation'),
    kafkaSslCertificateLocation: pick('kafkaSslCertificateLocation'),
    kafkaSslKeyLocation: pick('kafkaSslKeyLocation'),
    kafkaSslKeyPassword: pick('kafkaSslKeyPassword'),
    schemaRegistryBasicAuthUserInfo: pick('schemaRegistryBasicAuthUserInfo'),
    schemaRegistryBearerToken: pick('schemaRegistryBearerToken'),
    schemaRegistrySslCaLocation: pick('schemaRegistrySslCaLocation'),
    redisTlsCaLocation: pick('redisTlsCaLocation'),
    connectBasicAuthUserInfo: pick('connectBasicAuthUserInfo'),
    connectSecretsFile: pick('connectSecretsFile'),
    connectSslCaLocation: pick('connectSslCaLocation'),
  };
}

/** Where JSON.parse failed, as `line L, column C` (from V8's `position N`), without quoting the text. */
function jsonErrorPlace(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : '';
  const position = /position (\d+)/.exec(message)?.[1];
  if (position === undefined)
    return /end of JSON input/i.test(message) ? 'it ends too early' : 'a syntax error';
  const before = text.slice(0, Number(position)).split('\n');
  return `a syntax error at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** `value` (a URL) with its password replaced by `[REDACTED]`; a value that is no URL is returned as is. */
export function maskUrlPassword(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  // Not `new URL`: an invalid URL (the reason it is echoed) must be masked too.
  return value.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:/@\s]*):\S*@/, '$1:[REDACTED]@');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function isUrl(value: string, protocols: readonly string[]): boolean {
  try {
    const url = new URL(value);
    return protocols.includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}

function isHostPort(value: string): boolean {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
  if (match === null) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535;
}
