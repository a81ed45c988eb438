import { describe, expect, it } from 'vitest';
import {
  buildIcebergSinkConfig,
  catalogJdbcTarget,
  icebergConnectorName,
  icebergNamespace,
  ICEBERG_SINK_CLASS,
} from '../../../../src/output/lakehouse/index.js';
import { inlineSecretKeys, maskConnectorConfig } from '../../../../src/output/warehouse/index.js';

const base = {
  topicPrefix: 'gd.prod-1',
  catalogUri: 'postgresql+psycopg2://lake:s3cret@db.internal:5433/lakehouse',
  warehouse: 'file:///srv/lakehouse',
} as const;

describe('buildIcebergSinkConfig', () => {
  it('one Iceberg sink per resource: read_committed, JDBC catalog, schema evolution, partitions where they help', () => {
    const { name, table, config } = buildIcebergSinkConfig({ ...base, resource: 'transactions' });
    expect(name).toBe('gd.prod-1.transactions.iceberg-sink');
    expect(table).toBe('gd_prod_1.transactions');
    expect(config).toMatchObject({
      'connector.class': ICEBERG_SINK_CLASS,
      topics: 'gd.prod-1.transactions',
      'consumer.override.isolation.level': 'read_committed',
      'iceberg.tables': 'gd_prod_1.transactions',
      'iceberg.tables.auto-create-enabled': 'true',
      'iceberg.tables.evolve-schema-enabled': 'true',
      'iceberg.table.gd_prod_1.transactions.partition-by': 'day(createdAt)',
      'iceberg.control.topic': 'gd.prod-1.iceberg-control',
      // a coordinator that died before its first table commit is replaced by one that re-reads the control topic
      'iceberg.kafka.auto.offset.reset': 'earliest',
      'iceberg.control.commit.interval-ms': '10000',
      'iceberg.catalog': 'gamedata',
      'iceberg.catalog.catalog-impl': 'org.apache.iceberg.jdbc.JdbcCatalog',
      'iceberg.catalog.uri': 'jdbc:postgresql://db.internal:5433/lakehouse',
      'iceberg.catalog.jdbc.user': 'lake',
      'iceberg.catalog.warehouse': 'file:///srv/lakehouse',
      'iceberg.catalog.io-impl': 'org.apache.iceberg.hadoop.HadoopFileIO',
    });
    const users = buildIcebergSinkConfig({
      ...base,
      resource: 'users',
      namespace: 'lake',
      commitIntervalMs: 2000,
    });
    expect(users.table).toBe('lake.users');
    expect(Object.keys(users.config).filter((k) => k.endsWith('.partition-by'))).toEqual([]);
    expect(users.config['iceberg.control.commit.interval-ms']).toBe('2000');
    expect(Object.keys(users.config).filter((k) => k.endsWith('session.timeout.ms'))).toEqual([]);
    // a shorter session: for the tasks' consumers and the sink's control-topic ones (the coordinator's) alike
    const short = buildIcebergSinkConfig({ ...base, resource: 'users', consumerSessionTimeoutMs: 10_000 });
    expect(short.config).toMatchObject({
      'consumer.override.session.timeout.ms': '10000',
      'iceberg.kafka.session.timeout.ms': '10000',
    });
  });

  it('the catalog password goes through the secrets file, never inline when one is set', () => {
    const secrets = new Map<string, string>();
    const { config } = buildIcebergSinkConfig({
      ...base,
      resource: 'users',
      secretsFile: '/etc/connect/gd.properties',
      collectSecrets: secrets,
    });
    expect(config['iceberg.catalog.jdbc.password']).toBe(
      '${file:/etc/connect/gd.properties:iceberg.catalog.password}',
    );
    expect(secrets.get('iceberg.catalog.password')).toBe('s3cret');
    expect(inlineSecretKeys(config)).toEqual([]);
    const inline = buildIcebergSinkConfig({ ...base, resource: 'users' }).config;
    expect(inlineSecretKeys(inline)).toEqual(['iceberg.catalog.jdbc.password']);
    expect(maskConnectorConfig(inline)['iceberg.catalog.jdbc.password']).toBe('[REDACTED]');
  });

  it('refuses what the sink could not use', () => {
    expect(() => buildIcebergSinkConfig({ ...base, resource: 'users', warehouse: '/srv/lakehouse' })).toThrow(
      /ICEBERG_WAREHOUSE/,
    );
    expect(() => catalogJdbcTarget('mysql://a:b@h/db')).toThrow(/ICEBERG_CATALOG_URI/);
    expect(() => icebergNamespace('p', 'bad name')).toThrow(/ICEBERG_NAMESPACE/);
    expect(() => buildIcebergSinkConfig({ ...base, resource: 'users', commitIntervalMs: 0 })).toThrow(
      /commitIntervalMs/,
    );
    expect(catalogJdbcTarget('postgresql://u:p@h/db').jdbcUrl).toBe('jdbc:postgresql://h:5432/db');
    expect(icebergConnectorName('gamedata', 'elections')).toBe('gamedata.elections.iceberg-sink');
  });
});
