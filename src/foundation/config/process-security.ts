/**
 * This process's client security (Kafka `ssl`/`sasl`, registry auth and CA, Redis CA, Connect basic auth), read once
 * through `loadConfig()` and its files read. Client factories (`createKafkaClient`, `createRegistryClient`,
 * `connectRedis`, the service probes, the Connect client) use it when their options do not say otherwise, so every
 * client a command makes speaks to secured services without each call site passing the settings along.
 */
import { loadConfig } from './load-config.js';
import { resolveClientSecurity, type ClientSecurity } from './security-settings.js';

let cached: ClientSecurity | undefined;

/**
 * The client security of `env` (and the config file it names).
 * @throws ConfigError when the settings are invalid (commands have reported that at start already).
 */
export function processSecurity(env: NodeJS.ProcessEnv = process.env): ClientSecurity {
  if (env === process.env && cached !== undefined) return cached;
  const security = resolveClientSecurity(loadConfig({ env }));
  if (env === process.env) cached = security;
  return security;
}

/** Forgets the cached settings (tests that change `process.env`). */
export function resetProcessSecurity(): void {
  cached = undefined;
}
