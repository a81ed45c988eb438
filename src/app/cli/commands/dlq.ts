/**
 * `gamedata dlq replay <resource> [--since <iso>] [--until <iso>]` (issue 48, item 8): republishes, exactly once over
 * any number of replays, the resource's dead letters that now encode (read again by id from the upstream where it
 * has such a read, else the stored copy against today's schema), and leaves the rest in the DLQ with their reason.
 * One summary line. docs/operations.md, "Replaying dead letters".
 * Settings: the worker's (GAMEDATA_API_URL and key, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL, the prefixes,
 * GAMEDATA_DELIVERY).
 */
import type { Command } from 'commander';
import { ConfigError } from '../../../foundation/errors/index.js';
import { readPipelineSettings } from '../../../foundation/config/index.js';
import { isResourceName } from '../../../foundation/models/index.js';
import { formatDlqReplay } from '../../../pipeline/dead-letters/index.js';
import { runDlqReplay } from '../../index.js';
import { requireReachable } from '../service-probes.js';

function parseTime(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new ConfigError(`${flag} must be an ISO-8601 date-time, got ${JSON.stringify(value)}`);
  return ms;
}

export function register(program: Command): void {
  const dlq = program.command('dlq').description('dead-letter topics: replay what now encodes');
  dlq
    .command('replay')
    .description('republish, exactly once, the dead letters that now encode; the rest stay with their reason')
    .argument('<resource>', 'the resource whose <topic>.dlq to replay')
    .option('--since <iso>', 'only dead letters written at or after this time')
    .option('--until <iso>', 'only dead letters written before this time')
    .option('--json', 'print the report as JSON')
    .action(async (resource: string, flags: { since?: string; until?: string; json?: boolean }) => {
      if (!isResourceName(resource)) throw new ConfigError(`unknown resource ${JSON.stringify(resource)}`);
      const since = parseTime('--since', flags.since);
      const until = parseTime('--until', flags.until);
      const settings = readPipelineSettings({ api: true, kafka: true, registry: true });
      await requireReachable({
        kafkaBrokers: settings.kafkaBrokers,
        schemaRegistryUrl: settings.schemaRegistryUrl,
        redisUrl: settings.redisUrl,
      });
      const report = await runDlqReplay(settings, { resource, since, until });
      console.log(flags.json === true ? JSON.stringify(report) : formatDlqReplay(report));
    });
}
