import { describe, expect, it } from 'vitest';
import {
  allTopicNames,
  dlqTopicName,
  topicName,
  valueSubjectName,
} from '../../../../../src/foundation/models/topic-names.js';
import { planTopics, replicationForBrokers } from '../../../../../src/output/kafka/admin/create-topics.js';
import { readServiceEnv } from '../../../../../src/foundation/config/index.js';
import { ConfigError } from '../../../../../src/foundation/errors/index.js';

describe('topic names', () => {
  it('joins prefix and resource, and derives dlq and subject names', () => {
    const topic = topicName('gamedata', 'users');
    expect([topic, dlqTopicName(topic), valueSubjectName(topic)]).toEqual([
      'gamedata.users',
      'gamedata.users.dlq',
      'gamedata.users-value',
    ]);
    expect(allTopicNames('p').map((t) => t.topic)).toEqual([
      'p.articles',
      'p.transactions',
      'p.parties',
      'p.users',
      'p.elections',
      'p.donations',
    ]);
  });

  it('refuses a prefix Kafka would refuse', () => {
    expect(() => topicName('bad prefix', 'users')).toThrow(ConfigError);
    expect(() => topicName('', 'users')).toThrow(/topic prefix/);
  });
});

describe('planTopics', () => {
  it('plans six topics, six DLQs and the compacted checkpoint topic, compacting the entities that change', () => {
    const plan = planTopics({ topicPrefix: 'g' });
    expect(plan).toHaveLength(13);
    expect(plan.find((s) => s.topic === 'g.__slices')?.config).toEqual({
      'cleanup.policy': 'compact',
      'min.compaction.lag.ms': '14400000',
    });
    const policy = Object.fromEntries(plan.map((s) => [s.topic, s.config['cleanup.policy']]));
    expect(policy).toMatchObject({
      'g.users': 'compact',
      'g.parties': 'compact',
      'g.elections': 'compact',
      'g.articles': 'compact',
      'g.transactions': 'delete',
      'g.donations': 'delete',
      'g.users.dlq': 'delete',
      'g.transactions.dlq': 'delete',
    });
    expect(plan.every((s) => s.partitions === 3 && s.replicationFactor === 1)).toBe(true);
  });

  it('takes partitions, replication and cleanup overrides, and names a bad option', () => {
    const plan = planTopics({
      topicPrefix: 'g',
      partitions: 6,
      replicationFactor: 3,
      cleanupPolicy: { transactions: 'compact' },
    });
    expect(plan.find((s) => s.topic === 'g.transactions')).toMatchObject({
      partitions: 6,
      replicationFactor: 3,
      config: { 'cleanup.policy': 'compact' },
    });
    expect(() => planTopics({ partitions: 0 })).toThrow(/partitions must be an integer >= 1, got 0/);
    expect(() => planTopics({ cleanupPolicy: { users: 'forever' as 'delete' } })).toThrow(
      /cleanupPolicy.users/,
    );
  });

  it('replicates min(3, brokers) times, with min.insync.replicas=2 from 3 replicas up', () => {
    expect([1, 2, 3, 5].map(replicationForBrokers)).toEqual([1, 2, 3, 3]);
    for (const spec of planTopics({ replicationFactor: 3 }))
      expect(spec.config['min.insync.replicas']).toBe('2');
    for (const spec of planTopics({ replicationFactor: 2 }))
      expect(spec.config['min.insync.replicas']).toBeUndefined();
  });
});

describe('readServiceEnv', () => {
  it('lists every missing setting in one error', () => {
    let error: unknown;
    try {
      readServiceEnv({ kafka: true, registry: true }, {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toHaveLength(2);
  });

  it('parses brokers and defaults the prefix', () => {
    expect(readServiceEnv({ kafka: true }, { KAFKA_BROKERS: 'a:1, b:2' })).toEqual({
      kafkaBrokers: ['a:1', 'b:2'],
      schemaRegistryUrl: '',
      topicPrefix: 'gamedata',
    });
  });
});
