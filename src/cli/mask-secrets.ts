/**
 * Keeps secrets out of what the CLI prints: the API key and the passwords inside the Redis and warehouse URLs are
 * replaced by `[REDACTED]` wherever they appear in a line (an upstream that echoes the key in its error, a driver
 * that prints its connection URL). Loggers mask the same values through `registerSecret`; this is for the lines the
 * CLI writes itself (the fatal line, the worker's lines).
 */
import { loadConfig } from '../config/load-config.js';

const REDACTED = '[REDACTED]';
let cached: string[] | undefined;

function password(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p === '' ? undefined : p;
  } catch {
    return undefined;
  }
}

/** The secret values of this process's settings (env, config file), longest first; values under 4 characters are left out. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env === process.env && cached !== undefined) return cached;
  const values = new Set<string>();
  const add = (v: string | undefined): void => {
    if (v !== undefined && v.trim().length >= 4) values.add(v.trim());
  };
  add(env['GAMEDATA_API_KEY']);
  for (const name of ['REDIS_URL', 'WAREHOUSE_URL', 'CONNECT_WAREHOUSE_URL']) add(password(env[name]));
  try {
    // The config file may hold them too (an invalid config throws: the env values above still count).
    const config = loadConfig({ env });
    add(config.apiKey);
    for (const url of [config.redisUrl, config.warehouseUrl, config.connectWarehouseUrl]) add(password(url));
  } catch {
    // nothing more to learn
  }
  const list = [...values].sort((a, b) => b.length - a.length);
  if (env === process.env) cached = list;
  return list;
}

/** `text` with every secret value replaced by `[REDACTED]`. */
export function maskSecrets(text: string, secrets: readonly string[] = secretValues()): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  return out;
}
