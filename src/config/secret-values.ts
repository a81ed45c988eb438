/**
 * The secret values of a deployment's settings, from the one list in `security-settings.ts` ({@link SECRET_SETTINGS}),
 * and the masking every output path shares (loggers, the CLI's own lines, errors, `status`, connector configs).
 */
import { CONFIG_ENV_NAMES, loadConfig } from './load-config.js';
import { SECRET_SETTINGS, USER_INFO_SETTINGS } from './security-settings.js';

export const MASK = '[REDACTED]';
/** Values shorter than this are not masked (they would garble ordinary text). */
const MIN_LENGTH = 4;

export interface Secrets {
  /** Masked wherever they appear (the API key, SASL and key passwords, registry and Connect credentials). */
  values: string[];
  /** Masked where a URL carries them (`:<password>@`): a short URL password is often an ordinary word. */
  passwords: string[];
}

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
  const add = (set: Set<string>, v: unknown): void => {
    if (typeof v === 'string' && v.trim().length >= MIN_LENGTH) set.add(v.trim());
  };
  for (const key of SECRET_SETTINGS.values) add(values, settings[key]);
  // `user:password`: the password alone too (it can be printed apart, e.g. in a connector config)
  for (const key of USER_INFO_SETTINGS) {
    const v = settings[key];
    if (typeof v === 'string' && v.includes(':')) add(values, v.slice(v.indexOf(':') + 1));
  }
  for (const key of SECRET_SETTINGS.urls) add(passwords, urlPassword(settings[key]));
  return sortSecrets(values, passwords);
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
  let fromConfig: Secrets = { values: [], passwords: [] };
  try {
    fromConfig = secretsOf(loadConfig({ env }) as unknown as Record<string, unknown>);
  } catch {
    // an invalid config: the environment's values above still count
  }
  return sortSecrets(
    new Set([...fromEnv.values, ...fromConfig.values]),
    new Set([...fromEnv.passwords, ...fromConfig.passwords]),
  );
}

/** `text` with every secret value, and URL passwords inside URLs, replaced by `[REDACTED]`. */
export function maskWith(text: string, secrets: Secrets): string {
  let out = text;
  for (const secret of secrets.values) {
    out = out.split(secret).join(MASK);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join(MASK);
  }
  for (const secret of secrets.passwords) {
    out = out.split(`:${secret}@`).join(`:${MASK}@`);
    out = out.split(`:${encodeURIComponent(secret)}@`).join(`:${MASK}@`);
  }
  return out;
}

function sortSecrets(values: Set<string>, passwords: Set<string>): Secrets {
  // longest first, so a secret that contains another is masked whole
  const byLength = (a: string, b: string): number => b.length - a.length;
  return { values: [...values].sort(byLength), passwords: [...passwords].sort(byLength) };
}
