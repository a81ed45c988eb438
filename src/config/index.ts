export { loadConfig, DEFAULT_CONFIG, CONFIG_ENV_NAMES } from './load-config.js';
export type {
  GamedataConfig,
  ConfigInput,
  ConfigNeed,
  ConfigWith,
  LoadConfigOptions,
  LogLevel,
} from './load-config.js';
export { createLogger, registerSecret, REDACTED, REDACTED_PATHS } from './create-logger.js';
export type { Logger, LoggerOptions } from './create-logger.js';
