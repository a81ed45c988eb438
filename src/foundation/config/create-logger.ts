/**
 * Structured, namespaced logs (pino) that never carry a secret: known secret fields are redacted by path, and the
 * values of registered secrets (e.g. the API key) are masked wherever they appear, even inside a message string.
 * Logs go to stderr so a command's stdout stays clean for its data (NDJSON, `export` lines …).
 */
import { createRequire } from 'node:module';
import type { DestinationStream, Logger, pino as Pino } from 'pino';
import { ConfigError } from '../errors/index.js';
import type { LogLevel } from './load-config.js';
import { loadConfig } from './load-config.js';
import { maskWith, secretsOf, type Secrets } from './secret-values.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** Minimum level. @default GAMEDATA_LOG_LEVEL (env or config file, through loadConfig), else 'info' */
  level?: LogLevel;
  /** Where lines go. @default stderr (fd 2) */
  destination?: DestinationStream;
  /** Secret values masked wherever they appear (in addition to {@link registerSecret}). @default [] */
  secrets?: readonly string[];
  /** Extra field paths to redact (pino redact syntax). @default [] */
  redact?: readonly string[];
}

/** Field paths that are always redacted (any nesting up to two levels, and HTTP headers). */
export const REDACTED_PATHS: readonly string[] = [
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
];

export const REDACTED = '[REDACTED]';
const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const NAME_PATTERN = /^[a-z0-9][a-z0-9._:-]*$/;

const secrets = new Set<string>();
// URL passwords of this process's settings (masked inside URLs only), set when the shared root is made
let urlPasswords: string[] = [];
// short secret values of this process's settings (masked where they stand whole)
let shortSecrets: string[] = [];
let root: Logger | undefined;

const require = createRequire(import.meta.url);
let loadedPino: typeof Pino | undefined;
/**
 * pino, loaded when the first root logger is made, not with this module: the config folder's door (index.ts) is on
 * the CLI's start-up path (`gamedata --help` reads the settings but logs nothing), and loading pino takes ~20 ms.
 */
function pino(): typeof Pino {
  return (loadedPino ??= (require('pino') as { pino: typeof Pino }).pino);
}

/**
 * Masks `value` in every log line from now on (all loggers). Short values (< 4 characters) are ignored: masking
 * them would garble ordinary text. Call it once the API key is loaded.
 */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= 4) secrets.add(value);
}

/**
 * A logger whose lines carry `name` (a namespace such as `sink`, `jobs.worker`, `client`).
 * Without options, loggers share one root (stderr, level from GAMEDATA_LOG_LEVEL); with options a separate root
 * is made (tests pass their own destination).
 *
 * @throws ConfigError when `name` or `level` is not valid.
 * @example
 * const log = createLogger('sink');
 * log.info({ topic, count }, 'published');
 */
export function createLogger(name: string, options?: LoggerOptions): Logger {
  if (!NAME_PATTERN.test(name)) {
    throw new ConfigError(`createLogger: name must match ${NAME_PATTERN}; got ${JSON.stringify(name)}`);
  }
  if (options === undefined) {
    root ??= createRoot({});
    return root.child({ name });
  }
  return createRoot(options).child({ name });
}

function createRoot(options: LoggerOptions): Logger {
  // GAMEDATA_LOG_LEVEL (env or config file) through loadConfig, like every other setting.
  let level = options.level;
  if (level === undefined) {
    const config = loadConfig();
    level = config.logLevel;
    // This process's secrets (the one list in security-settings.ts) are masked in every line even if no caller
    // registered them.
    const own: Secrets = secretsOf(config as unknown as Record<string, unknown>);
    for (const value of own.values) registerSecret(value);
    urlPasswords = own.passwords;
    shortSecrets = own.short;
  }
  if (!LEVELS.includes(level)) {
    throw new ConfigError(
      `createLogger: level must be one of ${LEVELS.join(', ')}; got ${JSON.stringify(level)}`,
    );
  }
  const own = new Set(options.secrets ?? []);
  // each secret raw, JSON-escaped (a line is JSON), URL-encoded and in base64; any URL's credentials
  const mask = (text: string): string =>
    maskWith(text, {
      values: [...secrets, ...own].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length),
      passwords: urlPasswords,
      short: shortSecrets,
    });
  const createPino = pino();
  return createPino(
    {
      level,
      redact: { paths: [...REDACTED_PATHS, ...(options.redact ?? [])], censor: REDACTED },
      // Runs on every serialized line: masks a secret that slipped into a message, an error or any field.
      hooks: {
        streamWrite: mask,
      },
    },
    options.destination ?? createPino.destination({ fd: 2, sync: false }),
  );
}
