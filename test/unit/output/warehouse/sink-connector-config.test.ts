import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../src/foundation/errors/index.js';
import { RESOURCES } from '../../../../src/foundation/models/resources.js';
import {
  buildSinkConnectorConfig,
  connectDlqTopicName,
  toJdbcTarget,
  warehouseSchemaName,
} from '../../../../src/output/warehouse/index.js';

const base = {
  resource: 'users' as const,
  topicPrefix: 'e2e-wh.run-1',
  warehouseUrl: 'postgresql://gamedata:s3cr%40t@127.0.0.1:15432/gamedata?sslmode=disable',
};

describe('buildSinkConnectorConfig', () => {
  it('one upsert sink keyed by _id into <prefix schema>.<resource>, with its DLQ and read_committed', () => {
    const { name, config } = buildSinkConnectorConfig(base);
    expect(name).toBe('e2e-wh.run-1.users.postgres-sink');
    expect(config).toMatchObject({
      'connector.class': 'io.debezium.connector.jdbc.JdbcSinkConnector',
      'tasks.max': '1',
      topics: 'e2e-wh.run-1.users',
      'connection.url': 'jdbc:postgresql://127.0.0.1:15432/gamedata?sslmode=disable',
      'connection.username': 'gamedata',
      'connection.password': 's3cr@t',
      'insert.mode': 'upsert',
      'primary.key.mode': 'record_key',
      'primary.key.fields': '_id',
      'schema.evolution': 'basic',
      'quote.identifiers': 'true',
      'collection.name.format': 'e2e_wh_run_1.users',
      transforms: 'key,maps,flatten,json',
      'transforms.key.type': 'org.apache.kafka.connect.transforms.HoistField$Key',
      'transforms.key.field': '_id',
      'transforms.maps.type': 'gamedata.connect.ArraysOfRecordsToJson$Value',
      'transforms.flatten.type': 'org.apache.kafka.connect.transforms.Flatten$Value',
      'transforms.flatten.delimiter': '_',
      'transforms.json.type': 'gamedata.connect.ArraysOfRecordsToJson$Value',
      'errors.tolerance': 'all',
      'errors.deadletterqueue.topic.name': 'e2e-wh.run-1.users.connect-dlq',
      'errors.deadletterqueue.topic.replication.factor': '1',
      'errors.deadletterqueue.context.headers.enable': 'true',
      'consumer.override.isolation.level': 'read_committed',
    });
    // every value is a string (Connect's REST API wants a string map)
    expect(Object.values(config).every((v) => typeof v === 'string')).toBe(true);
  });

  it('is a pure function: the same options give the same config (PUT twice = no change)', () => {
    expect(buildSinkConnectorConfig(base)).toEqual(buildSinkConnectorConfig({ ...base }));
  });

  it('gives every resource its own connector, topic, table and DLQ', () => {
    const all = RESOURCES.map((resource) => buildSinkConnectorConfig({ ...base, resource }));
    for (const key of ['topics', 'collection.name.format', 'errors.deadletterqueue.topic.name'])
      expect(new Set(all.map((c) => c.config[key])).size).toBe(RESOURCES.length);
    expect(new Set(all.map((c) => c.name)).size).toBe(RESOURCES.length);
  });

  it('takes tasks, DLQ replication and batch size; rejects bad numbers naming the option', () => {
    const { config } = buildSinkConnectorConfig({
      ...base,
      tasksMax: 3,
      dlqReplicationFactor: 3,
      batchSize: 1000,
    });
    expect([
      config['tasks.max'],
      config['errors.deadletterqueue.topic.replication.factor'],
      config['batch.size'],
    ]).toEqual(['3', '3', '1000']);
    expect(() => buildSinkConnectorConfig({ ...base, tasksMax: 0 })).toThrow(
      /tasksMax must be an integer >= 1, got 0/,
    );
    expect(() => buildSinkConnectorConfig({ ...base, batchSize: 1.5 })).toThrow(ConfigError);
  });
});

describe('warehouseSchemaName', () => {
  it('turns . and - into _', () => {
    expect(warehouseSchemaName('gamedata')).toBe('gamedata');
    expect(warehouseSchemaName('demo-20261123.eu')).toBe('demo_20261123_eu');
  });
  it('rejects a prefix whose schema would exceed PostgreSQL identifiers (63)', () => {
    expect(() => warehouseSchemaName('p'.repeat(64))).toThrow(ConfigError);
  });
});

describe('toJdbcTarget', () => {
  it('splits a postgresql:// URL into the JDBC URL and credentials (default port 5432)', () => {
    expect(toJdbcTarget('postgres://u:p@db/wh')).toEqual({
      jdbcUrl: 'jdbc:postgresql://db:5432/wh',
      user: 'u',
      password: 'p',
      database: 'wh',
    });
  });
  it.each(['http://u:p@db/wh', 'postgresql://db/wh', 'postgresql://u:p@db/', 'not a url'])(
    'rejects %s',
    (url) => {
      expect(() => toJdbcTarget(url)).toThrow(ConfigError);
    },
  );
});

describe('connectDlqTopicName', () => {
  it('is <topic>.connect-dlq, apart from the pipeline DLQ <topic>.dlq', () => {
    expect(connectDlqTopicName('gamedata.users')).toBe('gamedata.users.connect-dlq');
  });
});
