/**
 * `gamedata status [--json] [--watch 5s]`: runs, slices done/active/failed, records fetched/published/deduplicated/
 * dead-lettered, tails with their lag and watermark, live workers (and their summed /metrics), and the upstream
 * rate-limit headroom the workers last saw. Reads Redis only (plus the workers' /metrics endpoints).
 * Settings: REDIS_URL, GAMEDATA_QUEUE_PREFIX, GAMEDATA_REDIS_PREFIX.
 */
import type { Command } from 'commander';
// Light modules only, imported directly (not the barrels, which load kafkajs and the registry client); the Redis
// and BullMQ readers load when the command runs, so `status --help` loads neither.
import { ConfigError } from '../../../foundation/errors/index.js';
import { readPipelineSettings, parseDuration } from '../../../foundation/config/index.js';
import { formatStatus } from '../../status/format-status.js';
import { commandRedisLines } from '../connection-lines.js';
import { maskSecrets, maskSecretsDeep } from '../mask-secrets.js';
import { sleep } from '../../../foundation/retry/index.js';

export function register(program: Command): void {
  program
    .command('status')
    .description('runs, slices, records, tail lag, workers and upstream rate-limit headroom')
    .option('--json', 'print the figures as JSON')
    .option('--runs <n>', 'how many recent runs to list', '10')
    .option('--no-scrape', "do not read the workers' /metrics endpoints")
    .option(
      '--scrape-hosts <hosts>',
      "comma-separated hosts whose workers' /metrics may be read (their addresses come from Redis)",
      '127.0.0.1,localhost,::1',
    )
    .option('--watch <duration>', 'redraw every so often until interrupted')
    .action(
      async (flags: {
        json?: boolean;
        runs: string;
        scrape: boolean;
        scrapeHosts: string;
        watch?: string;
      }) => {
        const recentRuns = Number(flags.runs);
        if (!Number.isSafeInteger(recentRuns) || recentRuns < 0)
          throw new ConfigError(`--runs must be an integer >= 0, got ${JSON.stringify(flags.runs)}`);
        const watchMs = flags.watch === undefined ? undefined : parseDuration('--watch', flags.watch);
        const settings = readPipelineSettings({});
        const [{ connectRedis }, { collectStatus }, { addressOf, requireReachable }] = await Promise.all([
          import('../../../pipeline/queue/index.js'),
          import('../../status/collect-status.js'),
          import('../service-probes.js'),
        ]);
        await requireReachable({ redisUrl: settings.redisUrl });
        // `--watch` across a Redis restart: one line per change of state, never an ioredis trace.
        const redis = commandRedisLines('status', addressOf(settings.redisUrl)).watch(
          connectRedis(settings.redisUrl),
        );
        try {
          for (;;) {
            const report = await collectStatus({
              redis,
              queuePrefix: settings.queuePrefix,
              redisPrefix: settings.redisPrefix,
              recentRuns,
              scrape: flags.scrape,
              scrapeHosts: flags.scrapeHosts
                .split(',')
                .map((h) => h.trim())
                .filter((h) => h !== ''),
            });
            // What Redis holds may carry a secret (a reason stored by an older worker, another deployment's): masked
            // here again, every string field and the printed text. Unknown figures print as null (not left out), so
            // scripts see every key.
            const masked = maskSecretsDeep(report);
            if (flags.json === true)
              console.log(
                maskSecrets(JSON.stringify(masked, (_k, v: unknown) => (v === undefined ? null : v), 2)),
              );
            else {
              if (watchMs !== undefined && process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[H');
              console.log(maskSecrets(formatStatus(masked)));
            }
            if (watchMs === undefined) break;
            await sleep(watchMs);
          }
        } finally {
          await redis.quit();
        }
      },
    );
}
