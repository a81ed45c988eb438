/**
 * `gamedata topics create`: the six resource topics and their `.dlq` topics (compacted for entities that change).
 * Settings: KAFKA_BROKERS, GAMEDATA_TOPIC_PREFIX (default `gamedata`).
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { clusterReplication, createTopics, planTopics } from '../../../output/kafka/index.js';
import type { CleanupPolicy } from '../../../output/kafka/index.js';
import { readServiceEnv } from '../../../foundation/config/index.js';
import { isResourceName } from '../../../foundation/models/index.js';
import type { ResourceName } from '../../../foundation/models/index.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected an integer >= 1, got ${JSON.stringify(value)}`);
  return n;
}

function cleanupPair(value: string, previous: Partial<Record<ResourceName, CleanupPolicy>> = {}) {
  const [resource, policy] = value.split('=');
  if (resource === undefined || !isResourceName(resource) || (policy !== 'compact' && policy !== 'delete')) {
    throw new InvalidArgumentError(`expected <resource>=compact|delete, got ${JSON.stringify(value)}`);
  }
  return { ...previous, [resource]: policy };
}

interface CreateFlags {
  prefix?: string;
  partitions: number;
  replication?: number;
  cleanup?: Partial<Record<ResourceName, CleanupPolicy>>;
  dryRun?: boolean;
}

export function register(program: Command): void {
  const topics = program.command('topics').description('Kafka topics of the pipeline');
  topics
    .command('create')
    .description(
      'create <prefix>.<resource> and <prefix>.<resource>.dlq for the six resources (existing ones are left as they are)',
    )
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .option('--partitions <n>', 'partitions per topic', positiveInt, 3)
    .option(
      '--replication <n>',
      "replication factor (default: the cluster's, min(3, brokers); with 3 replicas min.insync.replicas=2; a dry run assumes 1)",
      positiveInt,
    )
    .option(
      '--cleanup <resource=policy>',
      'cleanup policy override, repeatable (default: compact for users, parties, elections, articles; delete otherwise)',
      cleanupPair,
    )
    .option('--dry-run', 'print the plan without connecting')
    .action(async (flags: CreateFlags) => {
      const env = readServiceEnv({ kafka: flags.dryRun !== true });
      const options = {
        topicPrefix: flags.prefix ?? env.topicPrefix,
        partitions: flags.partitions,
        replicationFactor:
          flags.replication ??
          (flags.dryRun === true
            ? 1
            : (await clusterReplication({ brokers: env.kafkaBrokers })).replicationFactor),
        ...(flags.cleanup === undefined ? {} : { cleanupPolicy: flags.cleanup }),
      };
      for (const spec of planTopics(options)) {
        console.log(
          `${spec.topic}: ${spec.partitions} partition(s), replication ${spec.replicationFactor}, ${Object.entries(
            spec.config,
          )
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`,
        );
      }
      if (flags.dryRun === true) return;
      const result = await createTopics({ brokers: env.kafkaBrokers, ...options });
      console.log(`created ${result.created.length} topic(s), ${result.existing.length} already existed`);
      for (const t of result.existing) console.log(`  exists: ${t}`);
    });
}
