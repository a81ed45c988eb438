/**
 * Keeps secrets out of what the CLI prints: the API key is replaced by `[REDACTED]` wherever it appears in a line
 * (an upstream that echoes it in its error), and the passwords of the Redis and warehouse URLs wherever a URL
 * carries them (`://user:[REDACTED]@host`; a short password such as `gamedata` is also an ordinary word, so it is
 * masked in URLs only). Loggers mask the API key through `registerSecret`; this is for the lines the CLI writes
 * itself (the fatal line, the worker's lines).
 */
import { loadConfig } from '../config/load-config.js';

const REDACTED = '[REDACTED]';
let cached: Secrets | undefined;

function password(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p === '' ? undefined : p;
  } catch {
    return undefined;
  }
}

export interface Secrets {
  /** Masked wherever they appear (the API key). */
  values: string[];
  /** Masked where a URL carries them (`:<password>@`). */
  passwords: string[];
}

/** The secrets of this process's settings (env, config file); values under 4 characters are left out. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): Secrets {
  if (env === process.env && cached !== undefined) return cached;
  const values = new Set<string>();
  const passwords = new Set<string>();
  const add = (set: Set<string>, v: string | undefined): void => {
    if (v !== undefined && v.trim().length >= 4) set.add(v.trim());
  };
  add(values, env['GAMEDATA_API_KEY']);
  for (const name of ['REDIS_URL', 'WAREHOUSE_URL', 'CONNECT_WAREHOUSE_URL'])
    add(passwords, password(env[name]));
  try {
    // The config file may hold them too (an invalid config throws: the env values above still count).
    const config = loadConfig({ env });
    add(values, config.apiKey);
    for (const url of [config.redisUrl, config.warehouseUrl, config.connectWarehouseUrl])
      add(passwords, password(url));
  } catch {
    // nothing more to learn
  }
  const byLength = (a: string, b: string): number => b.length - a.length;
  const secrets = { values: [...values].sort(byLength), passwords: [...passwords].sort(byLength) };
  if (env === process.env) cached = secrets;
  return secrets;
}

/** `text` with the API key, and URL passwords inside URLs, replaced by `[REDACTED]`. */
export function maskSecrets(text: string, secrets: Secrets = secretValues()): string {
  let out = text;
  for (const secret of secrets.values) out = out.split(secret).join(REDACTED);
  for (const secret of secrets.passwords) {
    out = out.split(`:${secret}@`).join(`:${REDACTED}@`);
    out = out.split(`:${encodeURIComponent(secret)}@`).join(`:${REDACTED}@`);
  }
  return out;
}
