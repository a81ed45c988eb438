/**
 * Config: every setting, read and validated in one place (`loadConfig`: CLI flags > env > GAMEDATA_CONFIG file >
 * defaults; one ConfigError lists every problem), the views commands take of it (`readPipelineSettings`,
 * `readServiceEnv`), the logger, and the security side the clients of other wings take: each client's resolved
 * security (`processSecurity`), secret masking (`maskWith`, `ownSecrets`), and what a security failure is.
 */
export { loadConfig, DEFAULT_CONFIG, CONFIG_ENV_NAMES } from './load-config.js';
export { parseDuration, toDurationMs, formatDuration } from './duration.js';
export type {
  GamedataConfig,
  ConfigInput,
  ConfigNeed,
  ConfigWith,
  LoadConfigOptions,
  LogLevel,
  DeliveryMode,
} from './load-config.js';
export { createLogger, registerSecret, REDACTED, REDACTED_PATHS } from './create-logger.js';
export type { Logger, LoggerOptions } from './create-logger.js';
export { readPipelineSettings } from './pipeline-settings.js';
export type { PipelineSettings } from './pipeline-settings.js';
export { readServiceEnv } from './service-env.js';
export type { ServiceEnv } from './service-env.js';
export { parseSchemaContracts, DEFAULT_SCHEMA_CONTRACTS, SCHEMA_CONTRACTS } from './schema-contract.js';
export type { SchemaContract, SchemaContracts } from './schema-contract.js';
export { addressOf, withoutCredentials } from './address-of.js';
export { collectSecrets, ownSecrets, maskWith, maskError, maskDeep, NO_SECRETS } from './secret-values.js';
export type { Secrets } from './secret-values.js';
export { processSecurity } from './process-security.js';
export { plaintextCredentialWarnings } from './security-settings.js';
export type {
  SecuritySettings,
  KafkaClientSecurity,
  RegistryClientSecurity,
  RedisClientSecurity,
} from './security-settings.js';
export {
  securityFailure,
  handshakeResetFailure,
  isCredentialRefusal,
  isTlsHandshakeReset,
  FIRST_CONNECT_TLS_RESETS,
} from './security-failure.js';
