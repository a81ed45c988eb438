/**
 * `gamedata dedup migrate`: moves seen-sets of the old layout (one Redis set of `_id` / `_id@updatedAt` strings per
 * resource) into the compact layout and deletes them. Optional: the new version reads the old sets until they are
 * gone; this frees their memory (~66 bytes per record, every version of every entity). Run it once every worker
 * runs the new version. Idempotent.
 * Settings: REDIS_URL, GAMEDATA_REDIS_PREFIX.
 */
import type { Command } from 'commander';
import { createRedisSeenSet, migrateLegacySeenSets } from '../../../pipeline/dedup/index.js';
import { connectRedis } from '../../../pipeline/queue/index.js';
import { readPipelineSettings } from '../../../foundation/config/index.js';
import { commandRedisLines } from '../connection-lines.js';
import { addressOf, requireReachable } from '../service-probes.js';

export function register(program: Command): void {
  const dedup = program
    .command('dedup')
    .description('the seen-sets that keep records from being published twice');
  dedup
    .command('migrate')
    .description('move old-layout seen-sets into the compact layout, then delete them')
    .action(async () => {
      const settings = readPipelineSettings({});
      await requireReachable({ redisUrl: settings.redisUrl });
      const redis = commandRedisLines('dedup', addressOf(settings.redisUrl)).watch(
        connectRedis(settings.redisUrl),
      );
      try {
        const report = await migrateLegacySeenSets(redis, createRedisSeenSet(redis), {
          prefix: settings.redisPrefix,
        });
        if (report.sets.length === 0) console.log('dedup: no old-layout seen-set found');
        for (const s of report.sets) console.log(`dedup: migrated ${s.key} (${s.members} members)`);
      } finally {
        await redis.quit();
      }
    });
}
