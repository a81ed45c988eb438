/**
 * Keeps secrets out of what the CLI prints. The secrets are the settings `src/foundation/config` declares secret
 * (`SECRET_SETTINGS` in `security-settings.ts`: the API key, SASL and key passwords, registry and Connect
 * credentials — masked wherever they appear — and the passwords of URLs such as REDIS_URL, masked where a URL carries
 * them: a short password such as `gamedata` is also an ordinary word). Loggers mask the same list; this is for the
 * lines the CLI writes itself (the fatal line, the worker's lines, `status`, `connect list`).
 */
import {
  collectSecrets,
  maskDeep,
  maskWith,
  ownSecrets,
  type Secrets,
} from '../../foundation/config/index.js';

export type { Secrets } from '../../foundation/config/index.js';

/** The secrets of this process's settings (env, config file); values under 4 characters go to `short`. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): Secrets {
  return env === process.env ? ownSecrets() : collectSecrets(env);
}

/** `text` with the secrets (each form), and any URL's credentials, replaced by `[REDACTED]`. */
export function maskSecrets(text: string, secrets: Secrets = secretValues()): string {
  return maskWith(text, secrets);
}

/** A copy of a report or config (`status --json`, `connect list`) with every secret masked, whole fields too. */
export function maskSecretsDeep<T>(value: T, secrets: Secrets = secretValues()): T {
  return maskDeep(value, secrets);
}
