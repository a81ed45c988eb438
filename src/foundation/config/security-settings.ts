/**
 * Security settings of the services: Kafka (SASL PLAIN / SCRAM, TLS with a private CA, mutual TLS), the schema
 * registry (basic auth user info or a bearer token, TLS with a private CA), Redis (`rediss://`, a CA) and the Kafka
 * Connect REST API (basic auth). Names follow Confluent's client properties (`security.protocol` ->
 * `GAMEDATA_KAFKA_SECURITY_PROTOCOL`, `ssl.ca.location` -> `GAMEDATA_KAFKA_SSL_CA_LOCATION`, `basic.auth.user.info`
 * -> `GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO`). Certificates and keys are given by file path.
 *
 * They are read by `loadConfig()` with every other setting; this module holds their schemas, the checks across
 * settings (run at start, every problem in the one ConfigError), the one list of secret settings, and the
 * resolved, client-ready form ({@link resolveClientSecurity}) the Kafka, registry, Redis and Connect clients take.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { createTokenEndpointProvider } from './oauthbearer-token-endpoint.js';

/** `security.protocol` of a Kafka client. */
export type KafkaSecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
/** `sasl.mechanism` of a Kafka client. */
export type KafkaSaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';

/** The security settings as `loadConfig()` returns them (part of `GamedataConfig`). */
export interface SecuritySettings {
  /** `GAMEDATA_KAFKA_SECURITY_PROTOCOL`: `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`. @default 'PLAINTEXT' */
  kafkaSecurityProtocol: KafkaSecurityProtocol;
  /** `GAMEDATA_KAFKA_SASL_MECHANISM`: `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` (SASL_* protocols only). */
  kafkaSaslMechanism: KafkaSaslMechanism | undefined;
  /** `GAMEDATA_KAFKA_SASL_USERNAME`. */
  kafkaSaslUsername: string | undefined;
  /**
   * `GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE`: with `OAUTHBEARER`, a file holding the access token (a JWT); read
   * again at each (re)authentication, so a token refreshed in place by a sidecar is picked up. The token is a secret.
   */
  kafkaSaslOauthbearerTokenFile: string | undefined;
  /**
   * `GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL` (`sasl.oauthbearer.token.endpoint.url`): with `OAUTHBEARER`,
   * an OIDC / OAuth 2 token endpoint; tokens are fetched by the client-credentials grant and replaced before they
   * expire (`oauthbearer-token-endpoint.ts`). Instead of a token file.
   */
  kafkaSaslOauthbearerTokenEndpointUrl: string | undefined;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID` (`sasl.oauthbearer.client.id`). */
  kafkaSaslOauthbearerClientId: string | undefined;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET` (`sasl.oauthbearer.client.secret`): a secret. */
  kafkaSaslOauthbearerClientSecret: string | undefined;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE` (`sasl.oauthbearer.scope`): space-separated scopes. @default none */
  kafkaSaslOauthbearerScope: string | undefined;
  /** `GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION`: PEM CA file of an `https://` token endpoint. */
  kafkaSaslOauthbearerTokenEndpointCaLocation: string | undefined;
  /** `GAMEDATA_KAFKA_SASL_PASSWORD`: a secret (masked everywhere). */
  kafkaSaslPassword: string | undefined;
  /** `GAMEDATA_KAFKA_SSL_CA_LOCATION`: PEM file of the CA(s) that signed the brokers' certificates. @default the system CAs */
  kafkaSslCaLocation: string | undefined;
  /** `GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION`: PEM client certificate (mutual TLS), with the key below. */
  kafkaSslCertificateLocation: string | undefined;
  /** `GAMEDATA_KAFKA_SSL_KEY_LOCATION`: PEM private key of the client certificate. */
  kafkaSslKeyLocation: string | undefined;
  /** `GAMEDATA_KAFKA_SSL_KEY_PASSWORD`: passphrase of an encrypted key; a secret. */
  kafkaSslKeyPassword: string | undefined;
  /** `GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO`: `user:password` for HTTP basic auth; a secret. */
  schemaRegistryBasicAuthUserInfo: string | undefined;
  /** `GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN`: sent as `Authorization: Bearer <token>`; a secret. */
  schemaRegistryBearerToken: string | undefined;
  /** `GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION`: PEM CA file for an `https://` registry. @default the system CAs */
  schemaRegistrySslCaLocation: string | undefined;
  /** `GAMEDATA_REDIS_TLS_CA_LOCATION`: PEM CA file for a `rediss://` Redis. @default the system CAs */
  redisTlsCaLocation: string | undefined;
  /** `GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO`: `user:password` for the Kafka Connect REST API; a secret. */
  connectBasicAuthUserInfo: string | undefined;
  /**
   * `GAMEDATA_CONNECT_SECRETS_FILE`: path, as the Connect worker sees it, of the properties file holding the sink
   * connectors' secrets (written by `gamedata connect secrets-file`). The connector configs then carry
   * `${file:<path>:<key>}` references that the worker's `FileConfigProvider` resolves (`config.providers=file`),
   * never the secrets. Not checked here: the file lives on the worker. @default none: secrets inline (warned)
   */
  connectSecretsFile: string | undefined;
  /** `GAMEDATA_CONNECT_SSL_CA_LOCATION`: PEM CA file for an `https://` Kafka Connect REST API. @default the system CAs */
  connectSslCaLocation: string | undefined;
}

/** Each security setting's environment variable. */
export const SECURITY_ENV_NAMES = {
  kafkaSecurityProtocol: 'GAMEDATA_KAFKA_SECURITY_PROTOCOL',
  kafkaSaslMechanism: 'GAMEDATA_KAFKA_SASL_MECHANISM',
  kafkaSaslUsername: 'GAMEDATA_KAFKA_SASL_USERNAME',
  kafkaSaslOauthbearerTokenFile: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE',
  kafkaSaslOauthbearerTokenEndpointUrl: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL',
  kafkaSaslOauthbearerClientId: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID',
  kafkaSaslOauthbearerClientSecret: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET',
  kafkaSaslOauthbearerScope: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_SCOPE',
  kafkaSaslOauthbearerTokenEndpointCaLocation: 'GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_CA_LOCATION',
  kafkaSaslPassword: 'GAMEDATA_KAFKA_SASL_PASSWORD',
  kafkaSslCaLocation: 'GAMEDATA_KAFKA_SSL_CA_LOCATION',
  kafkaSslCertificateLocation: 'GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION',
  kafkaSslKeyLocation: 'GAMEDATA_KAFKA_SSL_KEY_LOCATION',
  kafkaSslKeyPassword: 'GAMEDATA_KAFKA_SSL_KEY_PASSWORD',
  schemaRegistryBasicAuthUserInfo: 'GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO',
  schemaRegistryBearerToken: 'GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN',
  schemaRegistrySslCaLocation: 'GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION',
  redisTlsCaLocation: 'GAMEDATA_REDIS_TLS_CA_LOCATION',
  connectBasicAuthUserInfo: 'GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO',
  connectSecretsFile: 'GAMEDATA_CONNECT_SECRETS_FILE',
  connectSslCaLocation: 'GAMEDATA_CONNECT_SSL_CA_LOCATION',
} as const satisfies Record<keyof SecuritySettings, string>;

export const DEFAULT_SECURITY_SETTINGS = {
  kafkaSecurityProtocol: 'PLAINTEXT',
} as const satisfies Partial<SecuritySettings>;

/**
 * THE list of secret settings (config keys), used by `loadConfig` (never echoed in a ConfigError), by the loggers
 * and by the CLI's `maskSecrets`. `values` are masked wherever they appear; `urls` are URLs whose password part
 * (`://user:<password>@`) is masked (and shown as `[REDACTED]` in a ConfigError's echo of the URL).
 */
export const SECRET_SETTINGS = {
  values: [
    'apiKey',
    'kafkaSaslPassword',
    'kafkaSslKeyPassword',
    'kafkaSaslOauthbearerClientSecret',
    'schemaRegistryBasicAuthUserInfo',
    'schemaRegistryBearerToken',
    'connectBasicAuthUserInfo',
  ],
  urls: [
    'redisUrl',
    'warehouseUrl',
    'connectWarehouseUrl',
    'schemaRegistryUrl',
    'connectUrl',
    'apiUrl',
    'kafkaSaslOauthbearerTokenEndpointUrl',
  ],
} as const;

/** `user:password` settings: besides the whole value, the password alone is a secret. */
export const USER_INFO_SETTINGS = ['schemaRegistryBasicAuthUserInfo', 'connectBasicAuthUserInfo'] as const;

const filePath = z.string().trim().min(1, 'must not be empty');
const secret = z.string().min(1, 'must not be empty');
const userInfo = z
  .string()
  .refine((v) => /^[^:]+:.+$/s.test(v), 'must be user:password (a user, a colon, a password)');

/** Schemas of the security settings (one per key), merged into `loadConfig`'s. */
export const SECURITY_FIELD_SCHEMAS = {
  kafkaSecurityProtocol: z
    .string()
    .trim()
    .transform((v) => v.toUpperCase())
    .pipe(z.enum(['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'])),
  kafkaSaslMechanism: z
    .string()
    .trim()
    .transform((v) => v.toUpperCase())
    .pipe(z.enum(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'])),
  kafkaSaslUsername: z.string().trim().min(1, 'must not be empty'),
  kafkaSaslOauthbearerTokenFile: filePath,
  kafkaSaslOauthbearerTokenEndpointUrl: z
    .string()
    .trim()
    .refine((v) => {
      try {
        const u = new URL(v);
        return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http(s) URL (the token endpoint)')
    .refine(
      (v) => !/^[a-z]+:\/\/[^/]*@/i.test(v),
      'must not carry credentials (GAMEDATA_KAFKA_SASL_OAUTHBEARER_CLIENT_ID and _CLIENT_SECRET)',
    ),
  kafkaSaslOauthbearerClientId: z.string().trim().min(1, 'must not be empty'),
  kafkaSaslOauthbearerClientSecret: secret,
  kafkaSaslOauthbearerScope: z.string().trim().min(1, 'must not be empty'),
  kafkaSaslOauthbearerTokenEndpointCaLocation: filePath,
  kafkaSaslPassword: secret,
  kafkaSslCaLocation: filePath,
  kafkaSslCertificateLocation: filePath,
  kafkaSslKeyLocation: filePath,
  kafkaSslKeyPassword: secret,
  schemaRegistryBasicAuthUserInfo: userInfo,
  schemaRegistryBearerToken: secret,
  schemaRegistrySslCaLocation: filePath,
  redisTlsCaLocation: filePath,
  connectBasicAuthUserInfo: userInfo,
  connectSecretsFile: z
    .string()
    .trim()
    .refine((v) => v.startsWith('/'), 'must be an absolute path (as the Connect worker sees it)')
    .refine((v) => !/[}:]/.test(v), 'must not contain ":" or "}" (it goes inside ${file:<path>:<key>})'),
  connectSslCaLocation: filePath,
} satisfies Record<keyof SecuritySettings, z.ZodType>;

const FILE_KEYS = [
  'kafkaSslCaLocation',
  'kafkaSslCertificateLocation',
  'kafkaSslKeyLocation',
  'kafkaSaslOauthbearerTokenFile',
  'kafkaSaslOauthbearerTokenEndpointCaLocation',
  'schemaRegistrySslCaLocation',
  'redisTlsCaLocation',
  'connectSslCaLocation',
] as const satisfies readonly (keyof SecuritySettings)[];

/** What the checks across settings need besides the security settings. */
export interface SecurityContext {
  schemaRegistryUrl: string | undefined;
  redisUrl: string | undefined;
  connectUrl: string | undefined;
  /** Settings that were given, valid or not (a given but invalid one is reported on its own, not as unset). */
  given?: ReadonlySet<string>;
}

/**
 * The checks that span settings, run at start: files exist and are readable, and the combinations make sense
 * (SASL needs a mechanism, a user and a password; TLS files need a TLS protocol; a certificate needs its key …).
 * Returns one line per problem, each naming the settings (never a secret's value).
 */
export function checkSecuritySettings(s: Partial<SecuritySettings>, context: SecurityContext): string[] {
  const issues: string[] = [];
  const n = SECURITY_ENV_NAMES;
  for (const key of FILE_KEYS) {
    const path = s[key];
    if (path === undefined) continue;
    const problem =
      unreadableFile(path) ?? (key === 'kafkaSaslOauthbearerTokenFile' ? undefined : notPem(path));
    if (problem !== undefined) issues.push(`${n[key]}: ${problem}: ${path}`);
  }
  const protocol = s.kafkaSecurityProtocol ?? DEFAULT_SECURITY_SETTINGS.kafkaSecurityProtocol;
  const sasl = protocol.startsWith('SASL_');
  const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const p = n.kafkaSecurityProtocol;
  const oauth = s.kafkaSaslMechanism === 'OAUTHBEARER';
  const endpointKeys = [
    'kafkaSaslOauthbearerTokenEndpointUrl',
    'kafkaSaslOauthbearerClientId',
    'kafkaSaslOauthbearerClientSecret',
    'kafkaSaslOauthbearerScope',
    'kafkaSaslOauthbearerTokenEndpointCaLocation',
  ] as const;
  const oauthKeys = ['kafkaSaslOauthbearerTokenFile', ...endpointKeys] as const;
  const has = (key: keyof SecuritySettings): boolean =>
    s[key] !== undefined || context.given?.has(key) === true;
  if (sasl) {
    if (!has('kafkaSaslMechanism'))
      issues.push(`${n.kafkaSaslMechanism} is not set (${p}=${protocol} needs it)`);
    if (oauth) issues.push(...oauthIssues(s, has, `${p}=${protocol} with OAUTHBEARER`));
    else
      for (const key of ['kafkaSaslUsername', 'kafkaSaslPassword'] as const)
        if (!has(key)) issues.push(`${n[key]} is not set (${p}=${protocol} needs it)`);
    if (oauth && (s.kafkaSaslUsername !== undefined || s.kafkaSaslPassword !== undefined))
      issues.push(
        `${n.kafkaSaslUsername} / ${n.kafkaSaslPassword} are set but ${n.kafkaSaslMechanism} is OAUTHBEARER (it sends a token: ${n.kafkaSaslOauthbearerTokenFile} or ${n.kafkaSaslOauthbearerTokenEndpointUrl})`,
      );
    if (!oauth && s.kafkaSaslMechanism !== undefined)
      for (const key of oauthKeys)
        if (s[key] !== undefined)
          issues.push(`${n[key]} is set but ${n.kafkaSaslMechanism} is not OAUTHBEARER`);
  } else {
    for (const key of ['kafkaSaslMechanism', 'kafkaSaslUsername', 'kafkaSaslPassword', ...oauthKeys] as const)
      if (s[key] !== undefined)
        issues.push(`${n[key]} is set but ${p} is ${protocol} (SASL needs SASL_SSL or SASL_PLAINTEXT)`);
  }
  if (!tls) {
    for (const key of [
      'kafkaSslCaLocation',
      'kafkaSslCertificateLocation',
      'kafkaSslKeyLocation',
      'kafkaSslKeyPassword',
    ] as const)
      if (s[key] !== undefined)
        issues.push(`${n[key]} is set but ${p} is ${protocol} (TLS needs SSL or SASL_SSL)`);
  }
  if ((s.kafkaSslCertificateLocation === undefined) !== (s.kafkaSslKeyLocation === undefined))
    issues.push(
      `${n.kafkaSslCertificateLocation} and ${n.kafkaSslKeyLocation} go together (mutual TLS needs both the certificate and its key)`,
    );
  if (s.kafkaSslKeyPassword !== undefined && s.kafkaSslKeyLocation === undefined)
    issues.push(`${n.kafkaSslKeyPassword} is set but ${n.kafkaSslKeyLocation} is not`);
  if (s.schemaRegistryBasicAuthUserInfo !== undefined && s.schemaRegistryBearerToken !== undefined)
    issues.push(
      `${n.schemaRegistryBasicAuthUserInfo} and ${n.schemaRegistryBearerToken} are both set (use one)`,
    );
  if (s.schemaRegistrySslCaLocation !== undefined && !/^https:/i.test(context.schemaRegistryUrl ?? ''))
    issues.push(`${n.schemaRegistrySslCaLocation} is set but SCHEMA_REGISTRY_URL is not an https:// URL`);
  if (s.connectSslCaLocation !== undefined && !/^https:/i.test(context.connectUrl ?? ''))
    issues.push(`${n.connectSslCaLocation} is set but CONNECT_URL is not an https:// URL`);
  if (s.redisTlsCaLocation !== undefined && !/^rediss:/i.test(context.redisUrl ?? ''))
    issues.push(`${n.redisTlsCaLocation} is set but REDIS_URL is not a rediss:// URL (TLS)`);
  return issues;
}

/**
 * OAUTHBEARER's token source: a token file, or a token endpoint with its client id and secret (not both); a CA
 * only for an `https://` endpoint. `has` says whether a setting was given (valid or not).
 */
function oauthIssues(
  s: Partial<SecuritySettings>,
  has: (key: keyof SecuritySettings) => boolean,
  needs: string,
): string[] {
  const n = SECURITY_ENV_NAMES;
  const issues: string[] = [];
  const file = has('kafkaSaslOauthbearerTokenFile');
  const endpoint = has('kafkaSaslOauthbearerTokenEndpointUrl');
  if (!file && !endpoint)
    issues.push(
      `${n.kafkaSaslOauthbearerTokenFile} is not set, nor ${n.kafkaSaslOauthbearerTokenEndpointUrl} (${needs} needs one: a token file, or an OIDC token endpoint with a client id and secret)`,
    );
  if (file && endpoint)
    issues.push(
      `${n.kafkaSaslOauthbearerTokenFile} and ${n.kafkaSaslOauthbearerTokenEndpointUrl} are both set (use one)`,
    );
  if (endpoint) {
    for (const key of ['kafkaSaslOauthbearerClientId', 'kafkaSaslOauthbearerClientSecret'] as const)
      if (!has(key)) issues.push(`${n[key]} is not set (${n.kafkaSaslOauthbearerTokenEndpointUrl} needs it)`);
  } else {
    for (const key of [
      'kafkaSaslOauthbearerClientId',
      'kafkaSaslOauthbearerClientSecret',
      'kafkaSaslOauthbearerScope',
      'kafkaSaslOauthbearerTokenEndpointCaLocation',
    ] as const)
      if (s[key] !== undefined)
        issues.push(`${n[key]} is set but ${n.kafkaSaslOauthbearerTokenEndpointUrl} is not`);
  }
  const url = s.kafkaSaslOauthbearerTokenEndpointUrl;
  if (
    s.kafkaSaslOauthbearerTokenEndpointCaLocation !== undefined &&
    url !== undefined &&
    !/^https:/i.test(url)
  )
    issues.push(
      `${n.kafkaSaslOauthbearerTokenEndpointCaLocation} is set but ${n.kafkaSaslOauthbearerTokenEndpointUrl} is not an https:// URL`,
    );
  return issues;
}

/** Whether a host name is loopback (traffic that never leaves the machine). */
function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Credentials that would cross the network in plain text: SASL PLAIN over SASL_PLAINTEXT (the password itself is
 * sent), a registry user or token over `http://`, a Redis password over `redis://`. One line each (no value), for the
 * CLI to print as warnings; loopback addresses are left out (nothing leaves the machine).
 */
export function plaintextCredentialWarnings(
  s: Partial<SecuritySettings>,
  context: {
    kafkaBrokers: readonly string[];
    schemaRegistryUrl: string | undefined;
    redisUrl: string | undefined;
  },
): string[] {
  const out: string[] = [];
  const hostOf = (url: string): string => {
    try {
      return new URL(url).hostname;
    } catch {
      return '';
    }
  };
  const remoteBroker = context.kafkaBrokers.some((b) => !isLoopback(b.replace(/:\d+$/, '')));
  if (s.kafkaSecurityProtocol === 'SASL_PLAINTEXT' && s.kafkaSaslMechanism === 'PLAIN' && remoteBroker)
    out.push(
      'GAMEDATA_KAFKA_SASL_MECHANISM=PLAIN over SASL_PLAINTEXT sends the Kafka password in plain text: use SASL_SSL (or SCRAM)',
    );
  const tokenEndpoint = s.kafkaSaslOauthbearerTokenEndpointUrl ?? '';
  if (
    s.kafkaSaslMechanism === 'OAUTHBEARER' &&
    /^http:/i.test(tokenEndpoint) &&
    !isLoopback(hostOf(tokenEndpoint))
  )
    out.push(
      'the OAuth client secret and tokens go over plain http:// (GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL): use https://',
    );
  const registry = context.schemaRegistryUrl ?? '';
  if (
    /^http:/i.test(registry) &&
    !isLoopback(hostOf(registry)) &&
    (s.schemaRegistryBasicAuthUserInfo !== undefined ||
      s.schemaRegistryBearerToken !== undefined ||
      /^http:\/\/[^/]*@/i.test(registry))
  )
    out.push('the schema registry credentials go over plain http:// (SCHEMA_REGISTRY_URL): use https://');
  const redis = context.redisUrl ?? '';
  if (/^redis:/i.test(redis) && !isLoopback(hostOf(redis))) {
    let password = '';
    try {
      password = new URL(redis).password;
    } catch {
      // an invalid URL is reported by loadConfig
    }
    if (password !== '')
      out.push('the Redis password goes over plain redis:// (REDIS_URL): use rediss:// (TLS)');
  }
  return out;
}

/**
 * The OAUTHBEARER token of `path`, read at each (re)authentication (a token refreshed in place is picked up).
 * @throws ConfigError when the file is empty or unreadable (names the setting, never the token).
 */
export async function readTokenFile(path: string): Promise<{ value: string }> {
  const { readFile } = await import('node:fs/promises');
  let value: string;
  try {
    value = (await readFile(path, 'utf8')).trim();
  } catch (error) {
    throw new ConfigError(
      `GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (value === '') throw new ConfigError(`GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: ${path} is empty`);
  return { value };
}

/**
 * Certificates and keys are PEM: a file without a PEM block (a DER key, a JKS store, the wrong file) is one config
 * line at start instead of a TLS failure, retried, at the first connection.
 */
function notPem(path: string): string | undefined {
  try {
    return /-----BEGIN [A-Z0-9 ]+-----/.test(readFileSync(path, 'latin1'))
      ? undefined
      : 'not a PEM file (no -----BEGIN ... ----- block)';
  } catch {
    return undefined; // reported by unreadableFile
  }
}

function unreadableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES'
        ? 'file not readable'
        : `cannot read file (${code ?? 'error'})`;
  }
}

/** The kafkajs `ssl` / `sasl` options. */
export interface KafkaClientSecurity {
  /** `true` = TLS with the system CAs; an object = TLS with these PEM contents. Undefined = plaintext. */
  ssl?:
    true | { ca?: string; cert?: string; key?: string; passphrase?: string; rejectUnauthorized?: boolean };
  sasl?:
    | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
    | { mechanism: 'oauthbearer'; oauthBearerProvider: () => Promise<{ value: string }> };
}

/** The registry client's authentication and TLS. */
export interface RegistryClientSecurity {
  /** `user:password` for basic auth. */
  basicAuthUserInfo?: string;
  bearerToken?: string;
  /** PEM contents of the CA. */
  ca?: string;
}

/** Redis TLS beyond what `rediss://` says: the CA. */
export interface RedisClientSecurity {
  /** PEM contents of the CA (only with `rediss://`). */
  ca?: string;
}

/** Everything the clients need, files read. */
export interface ClientSecurity {
  kafka: KafkaClientSecurity;
  registry: RegistryClientSecurity;
  redis: RedisClientSecurity;
  /** `user:password` for the Kafka Connect REST API. */
  connectBasicAuthUserInfo?: string;
  /** PEM contents of the Kafka Connect REST API's CA. */
  connectCa?: string;
  /** The settings as configured (file paths, not contents): the sink connectors' config is built from these. */
  settings: Partial<SecuritySettings>;
}

/**
 * The client-ready form of validated settings (certificate and key files read). Call after `loadConfig` (which
 * checked the files); a file that vanished since throws.
 */
export function resolveClientSecurity(s: Partial<SecuritySettings>): ClientSecurity {
  const read = (path: string | undefined): string | undefined =>
    path === undefined ? undefined : readFileSync(path, 'utf8');
  const protocol = s.kafkaSecurityProtocol ?? 'PLAINTEXT';
  const kafka: KafkaClientSecurity = {};
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const ca = read(s.kafkaSslCaLocation);
    const cert = read(s.kafkaSslCertificateLocation);
    const key = read(s.kafkaSslKeyLocation);
    const tls = {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      ...(s.kafkaSslKeyPassword === undefined ? {} : { passphrase: s.kafkaSslKeyPassword }),
    };
    kafka.ssl = Object.keys(tls).length === 0 ? true : tls;
  }
  const tokenFile = s.kafkaSaslOauthbearerTokenFile;
  const endpoint = s.kafkaSaslOauthbearerTokenEndpointUrl;
  const oauth = protocol.startsWith('SASL_') && s.kafkaSaslMechanism === 'OAUTHBEARER';
  if (oauth && tokenFile !== undefined) {
    kafka.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: () => readTokenFile(tokenFile) };
  } else if (
    oauth &&
    endpoint !== undefined &&
    s.kafkaSaslOauthbearerClientId !== undefined &&
    s.kafkaSaslOauthbearerClientSecret !== undefined
  ) {
    const ca = read(s.kafkaSaslOauthbearerTokenEndpointCaLocation);
    kafka.sasl = {
      mechanism: 'oauthbearer',
      oauthBearerProvider: createTokenEndpointProvider({
        tokenEndpointUrl: endpoint,
        clientId: s.kafkaSaslOauthbearerClientId,
        clientSecret: s.kafkaSaslOauthbearerClientSecret,
        ...(s.kafkaSaslOauthbearerScope === undefined ? {} : { scope: s.kafkaSaslOauthbearerScope }),
        ...(ca === undefined ? {} : { ca }),
      }),
    };
  } else if (
    protocol.startsWith('SASL_') &&
    s.kafkaSaslMechanism !== undefined &&
    s.kafkaSaslMechanism !== 'OAUTHBEARER' &&
    s.kafkaSaslUsername !== undefined &&
    s.kafkaSaslPassword !== undefined
  ) {
    kafka.sasl = {
      mechanism: s.kafkaSaslMechanism.toLowerCase() as 'plain' | 'scram-sha-256' | 'scram-sha-512',
      username: s.kafkaSaslUsername,
      password: s.kafkaSaslPassword,
    };
  }
  const registryCa = read(s.schemaRegistrySslCaLocation);
  const redisCa = read(s.redisTlsCaLocation);
  const connectCa = read(s.connectSslCaLocation);
  return {
    kafka,
    registry: {
      ...(s.schemaRegistryBasicAuthUserInfo === undefined
        ? {}
        : { basicAuthUserInfo: s.schemaRegistryBasicAuthUserInfo }),
      ...(s.schemaRegistryBearerToken === undefined ? {} : { bearerToken: s.schemaRegistryBearerToken }),
      ...(registryCa === undefined ? {} : { ca: registryCa }),
    },
    redis: redisCa === undefined ? {} : { ca: redisCa },
    ...(s.connectBasicAuthUserInfo === undefined
      ? {}
      : { connectBasicAuthUserInfo: s.connectBasicAuthUserInfo }),
    ...(connectCa === undefined ? {} : { connectCa }),
    settings: s,
  };
}
