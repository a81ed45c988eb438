/**
 * The secret values of a deployment's settings, from the one list in `security-settings.ts` ({@link SECRET_SETTINGS}),
 * and the masking every output path shares (loggers, the CLI's own lines, errors, `status`, connector configs).
 *
 * Masked twice: before anything is stored (a BullMQ `failedReason`, a run's reason, a tail's `lastError`, a dead
 * letter's headers, a log line) and again where anything stored is shown (`status`, `status --json`, `connect list`),
 * since what is stored may predate a setting (an older worker's, another deployment's). Each secret is masked raw,
 * URL-encoded, JSON-escaped (once and twice: a secret with `"` or `\` inside a stored JSON string) and in base64 (a
 * `user:password` is what HTTP basic auth sends). Credentials of any URL (`scheme://user:password@`) are masked even
 * when the password is no known secret (an upstream's error text).
 */
import { CONFIG_ENV_NAMES, loadConfig } from './load-config.js';
import { SECRET_SETTINGS, USER_INFO_SETTINGS } from './security-settings.js';

export const MASK = '[REDACTED]';
/**
 * Values shorter than this are masked only where they stand whole (see {@link Secrets.short}): anywhere, they
 * would garble ordinary text.
 */
const MIN_LENGTH = 4;

export interface Secrets {
  /** Masked wherever they appear (the API key, SASL and key passwords, registry and Connect credentials). */
  values: string[];
  /** Masked where a URL carries them (`:<password>@`): a short URL password is often an ordinary word. */
  passwords: string[];
  /**
   * Secret values under 4 characters: masked by exact value where a value stands whole (a URL's password, a quoted
   * string, after `=` or `: ` up to a delimiter, a whole field of `status --json` or a connector config).
   */
  short: string[];
}

/** No secrets: only the credentials of URLs are masked. */
export const NO_SECRETS: Secrets = { values: [], passwords: [], short: [] };

/** The password of a URL, decoded; undefined when none or not a URL. */
export function urlPassword(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p === '' ? undefined : p;
  } catch {
    return undefined;
  }
}

/** The secrets among `settings` (config keys to raw or parsed values). */
export function secretsOf(settings: Readonly<Record<string, unknown>>): Secrets {
  const values = new Set<string>();
  const passwords = new Set<string>();
  const short = new Set<string>();
  const add = (set: Set<string>, v: unknown): void => {
    if (typeof v !== 'string' || v === '') return;
    // the value as given and trimmed (a setting's value is trimmed where it is used)
    for (const x of new Set([v, v.trim()]))
      if (x.length >= MIN_LENGTH) set.add(x);
      else if (x !== '') short.add(x);
  };
  for (const key of SECRET_SETTINGS.values) add(values, settings[key]);
  // `user:password`: the password alone too (it can be printed apart, e.g. in a connector config)
  for (const key of USER_INFO_SETTINGS) {
    const v = settings[key];
    if (typeof v === 'string' && v.includes(':')) add(values, v.slice(v.indexOf(':') + 1));
  }
  for (const key of SECRET_SETTINGS.urls) add(passwords, urlPassword(settings[key]));
  return sortSecrets(values, passwords, short);
}

/**
 * The secrets of this environment and its config file. The raw environment counts even when the config is
 * invalid (the ConfigError's own text must still be masked).
 */
export function collectSecrets(env: NodeJS.ProcessEnv = process.env): Secrets {
  const raw: Record<string, unknown> = {};
  for (const key of [...SECRET_SETTINGS.values, ...SECRET_SETTINGS.urls])
    raw[key] = env[CONFIG_ENV_NAMES[key]];
  const fromEnv = secretsOf(raw);
  let fromConfig: Secrets = NO_SECRETS;
  try {
    fromConfig = secretsOf(loadConfig({ env }) as unknown as Record<string, unknown>);
  } catch {
    // an invalid config: the environment's values above still count
  }
  return sortSecrets(
    new Set([...fromEnv.values, ...fromConfig.values]),
    new Set([...fromEnv.passwords, ...fromConfig.passwords]),
    new Set([...fromEnv.short, ...fromConfig.short]),
  );
}

let processSecrets: Secrets | undefined;

/**
 * The secrets of this process's settings (`process.env` and its `GAMEDATA_CONFIG` file), collected once: the default
 * of every store and output that masks (a caller that forgets to pass its secrets still masks them).
 */
export function ownSecrets(): Secrets {
  processSecrets ??= collectSecrets(process.env);
  return processSecrets;
}

/** The forms a secret takes in stored or printed text: raw, URL-encoded, JSON-escaped (twice too), base64. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret)]);
  const once = JSON.stringify(secret).slice(1, -1);
  forms.add(once);
  forms.add(JSON.stringify(once).slice(1, -1));
  const b64 = Buffer.from(secret, 'utf8').toString('base64');
  forms.add(b64);
  forms.add(b64.replace(/=+$/, ''));
  forms.add(Buffer.from(secret, 'utf8').toString('base64url'));
  return [...forms].filter((f) => f.length >= MIN_LENGTH);
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// `scheme://user:password@`: the password of any URL in a text (an upstream's message, a URL quoted whole)
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"'<>]*):([^\s/?#@"'<>]+)@/gi;

/**
 * `text` with every secret value (in each of its forms), URL passwords inside URLs, any URL's credentials and short
 * secrets where they stand whole, replaced by `[REDACTED]`.
 * @example maskWith('GET https://u:pw@h:1/x failed', NO_SECRETS) // 'GET https://u:[REDACTED]@h:1/x failed'
 */
export function maskWith(text: string, secrets: Secrets): string {
  let out = text;
  for (const secret of secrets.values) for (const form of formsOf(secret)) out = out.split(form).join(MASK);
  for (const secret of secrets.passwords) {
    out = out.split(`:${secret}@`).join(`:${MASK}@`);
    out = out.split(`:${encodeURIComponent(secret)}@`).join(`:${MASK}@`);
  }
  out = out.replace(URL_CREDENTIALS, (_m, head: string, pw: string) =>
    pw === MASK ? _m : `${head}:${MASK}@`,
  );
  for (const secret of secrets.short) {
    const forms = [...new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])];
    const alt = forms.map(escapeRegExp).join('|');
    // a whole value: between quotes, after `=` or `:` (a URL's password, key=value, "key": value) up to a delimiter
    out = out.replace(new RegExp(`(^|["'=:]\\s?)(?:${alt})(?=$|["'@\\s,;&)\\]}])`, 'g'), `$1${MASK}`);
  }
  return out;
}

/**
 * `error` with its message and stack masked (in place, so its class and fields stay: a BullMQ processor rethrows
 * it and BullMQ stores the message as `failedReason` and the stack in `stacktrace`). Its causes are masked too.
 */
export function maskError<E>(error: E, secrets: Secrets): E {
  const seen = new Set<unknown>();
  let e: unknown = error;
  while (e instanceof Error && !seen.has(e)) {
    seen.add(e);
    try {
      e.message = maskWith(e.message, secrets);
      if (e.stack !== undefined) e.stack = maskWith(e.stack, secrets);
    } catch {
      // a frozen error: left as it is (its text is masked again where shown)
    }
    e = e.cause;
  }
  return error;
}

/**
 * A copy of `value` (JSON-like: a status report, a connector config) with every string masked, and every string
 * that is a secret whole (a short one included) replaced by `[REDACTED]`.
 */
export function maskDeep<T>(value: T, secrets: Secrets): T {
  const whole = new Set([...secrets.values, ...secrets.passwords, ...secrets.short]);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return whole.has(v) ? MASK : maskWith(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

function sortSecrets(values: Set<string>, passwords: Set<string>, short: Set<string>): Secrets {
  // longest first, so a secret that contains another is masked whole
  const byLength = (a: string, b: string): number => b.length - a.length;
  return {
    values: [...values].sort(byLength),
    passwords: [...passwords].sort(byLength),
    short: [...short].sort(byLength),
  };
}
