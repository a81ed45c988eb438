/**
 * Keeps secrets out of what the CLI prints. The secrets are the settings `src/config` declares secret
 * (`SECRET_SETTINGS` in `security-settings.ts`: the API key, SASL and key passwords, registry and Connect
 * credentials — masked wherever they appear — and the passwords of URLs such as REDIS_URL, masked where a URL carries
 * them: a short password such as `gamedata` is also an ordinary word). Loggers mask the same list; this is for the
 * lines the CLI writes itself (the fatal line, the worker's lines, `status`, `connect list`).
 */
import { collectSecrets, maskWith, type Secrets } from '../config/secret-values.js';

export type { Secrets } from '../config/secret-values.js';

let cached: Secrets | undefined;

/** The secrets of this process's settings (env, config file); values under 4 characters are left out. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): Secrets {
  if (env === process.env && cached !== undefined) return cached;
  const secrets = collectSecrets(env);
  if (env === process.env) cached = secrets;
  return secrets;
}

/** `text` with the secrets, and URL passwords inside URLs, replaced by `[REDACTED]`. */
export function maskSecrets(text: string, secrets: Secrets = secretValues()): string {
  return maskWith(text, secrets);
}
