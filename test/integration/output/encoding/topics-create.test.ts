// `createTopics` on the real broker: six topics + six DLQs with the planned partitions and cleanup policies
// (compact for entities that change), idempotent on a second run.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import { createTopics, planTopics } from '../../../../src/output/kafka/index.js';

const services = createTestServices('topics-create');
afterAll(() => services.cleanup());

describe('createTopics against the real broker', () => {
  it('creates every topic with its partitions and cleanup policy, then leaves them alone', async () => {
    const options = {
      brokers: services.urls.kafkaBrokers,
      topicPrefix: services.prefix,
      partitions: 2,
      cleanupPolicy: { donations: 'compact' as const },
    };
    const first = await createTopics(options);
    const plan = planTopics(options);
    expect(first.created.sort()).toEqual(plan.map((s) => s.topic).sort());
    expect(first.existing).toEqual([]);

    const admin = await services.admin();
    const metadata = await admin.fetchTopicMetadata({ topics: plan.map((s) => s.topic) });
    for (const topic of metadata.topics) expect(topic.partitions, topic.name).toHaveLength(2);
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: plan.map((s) => ({
        type: ConfigResourceTypes.TOPIC,
        name: s.topic,
        configNames: ['cleanup.policy', 'max.message.bytes'],
      })),
    });
    const policy = Object.fromEntries(
      configs.resources.map((r) => [
        r.resourceName,
        r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue,
      ]),
    );
    const p = services.prefix;
    expect(policy).toEqual({
      [`${p}.articles`]: 'compact',
      [`${p}.users`]: 'compact',
      [`${p}.parties`]: 'compact',
      [`${p}.elections`]: 'compact',
      [`${p}.transactions`]: 'delete',
      [`${p}.donations`]: 'compact',
      [`${p}.articles.dlq`]: 'delete',
      [`${p}.users.dlq`]: 'delete',
      [`${p}.parties.dlq`]: 'delete',
      [`${p}.elections.dlq`]: 'delete',
      [`${p}.transactions.dlq`]: 'delete',
      [`${p}.donations.dlq`]: 'delete',
      [`${p}.__slices`]: 'compact',
    });
    const dlqMax = configs.resources
      .find((r) => r.resourceName === `${p}.users.dlq`)
      ?.configEntries.find((e) => e.configName === 'max.message.bytes');
    expect(dlqMax?.configValue).toBe('10485760');

    const second = await createTopics(options);
    expect(second.created).toEqual([]);
    expect(second.existing).toHaveLength(13);
  });

  it('`gamedata topics create` creates them from the command line with its flags', async () => {
    const prefix = `${services.prefix}-cli`;
    const root = fileURLToPath(new URL('../../../..', import.meta.url));
    const { stdout } = await promisify(execFile)(
      'npx',
      [
        'tsx',
        'src/app/cli/main.ts',
        'topics',
        'create',
        '--prefix',
        prefix,
        '--partitions',
        '2',
        '--cleanup',
        'transactions=compact',
      ],
      { cwd: root, env: { ...process.env, KAFKA_BROKERS: services.urls.kafkaBrokers.join(',') } },
    );
    expect(stdout).toContain(`${prefix}.transactions: 2 partition(s), replication 1, cleanup.policy=compact`);
    expect(stdout).toContain('created 13 topic(s), 0 already existed');
    const admin = await services.admin();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
    expect(topics).toHaveLength(13);
  });
});
