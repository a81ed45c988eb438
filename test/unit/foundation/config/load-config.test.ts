import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG,
  DEFAULT_SCHEMA_CONTRACTS,
  loadConfig,
} from '../../../../src/foundation/config/index.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

const FULL_ENV = {
  GAMEDATA_API_URL: 'http://127.0.0.1:4000/trpc/',
  GAMEDATA_API_KEY: 'sk-very-secret-key',
  KAFKA_BROKERS: '127.0.0.1:19092, localhost:19094',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:18081/apis/ccompat/v7/',
  REDIS_URL: 'redis://127.0.0.1:16379',
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function tempFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gamedata-config-')), 'config.json');
  writeFileSync(path, content);
  return path;
}

describe('loadConfig', () => {
  it('reads every setting from the environment and normalises it', () => {
    const config = loadConfig({ env: FULL_ENV, need: ['api', 'kafka', 'registry', 'redis'] });
    expect(config).toEqual({
      apiUrl: 'http://127.0.0.1:4000/trpc',
      apiKey: 'sk-very-secret-key',
      kafkaBrokers: ['127.0.0.1:19092', 'localhost:19094'],
      schemaRegistryUrl: 'http://127.0.0.1:18081/apis/ccompat/v7',
      redisUrl: 'redis://127.0.0.1:16379',
      topicPrefix: 'gamedata',
      queuePrefix: 'gamedata-bull',
      redisPrefix: 'gamedata',
      logLevel: 'info',
      retentionAgeMs: 7 * 86_400_000,
      retentionRuns: 20_000,
      kafkaSecurityProtocol: 'PLAINTEXT',
      delivery: 'exactly-once',
      shortPages: 'end',
      transactionLingerMs: 25,
      maxResponseBytes: 67_108_864,
      giveUpAfterMs: 300_000,
      drainTimeoutMs: 30_000,
      schemaContracts: DEFAULT_SCHEMA_CONTRACTS,
    });
  });

  it('reads the byte cap on upstream answers (issue 48): a whole number of bytes >= 65536, default 64 MiB', () => {
    expect(loadConfig({ env: {} }).maxResponseBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ env: { GAMEDATA_MAX_RESPONSE_BYTES: '1048576' } }).maxResponseBytes).toBe(1_048_576);
    for (const bad of ['1024', '1.5e6', 'lots', '-1'])
      expect(() => loadConfig({ env: { GAMEDATA_MAX_RESPONSE_BYTES: bad } })).toThrow(
        new RegExp(
          `GAMEDATA_MAX_RESPONSE_BYTES \\(env\\): must be a whole number of bytes, at least 65536.*; got "${bad}"`,
        ),
      );
  });

  it("reads the shared transactions' linger as a duration from 0 to 1s, and names a bad one", () => {
    expect(loadConfig({ env: {} }).transactionLingerMs).toBe(25);
    expect(loadConfig({ env: { GAMEDATA_TRANSACTION_LINGER: '0' } }).transactionLingerMs).toBe(0);
    expect(loadConfig({ env: { GAMEDATA_TRANSACTION_LINGER: '50ms' } }).transactionLingerMs).toBe(50);
    expect(loadConfig({ env: {}, overrides: { transactionLingerMs: '1s' } }).transactionLingerMs).toBe(1000);
    for (const bad of ['2s', '-5', 'soon'])
      expect(() => loadConfig({ env: { GAMEDATA_TRANSACTION_LINGER: bad } })).toThrow(
        new RegExp(`GAMEDATA_TRANSACTION_LINGER \\(env\\): must be a duration from 0 to 1s.*; got "${bad}"`),
      );
  });

  it("reads the worker's give-up and drain deadlines as durations, and names a bad one", () => {
    const config = loadConfig({ env: { GAMEDATA_GIVE_UP_AFTER: '90s', GAMEDATA_DRAIN_TIMEOUT: '1.5m' } });
    expect([config.giveUpAfterMs, config.drainTimeoutMs]).toEqual([90_000, 90_000]);
    expect(loadConfig({ env: {}, overrides: { giveUpAfterMs: '10s', drainTimeoutMs: 2500 } })).toMatchObject({
      giveUpAfterMs: 10_000,
      drainTimeoutMs: 2500,
    });
    expect(() =>
      loadConfig({ env: { GAMEDATA_GIVE_UP_AFTER: 'soon', GAMEDATA_DRAIN_TIMEOUT: '0s' } }),
    ).toThrow(
      /GAMEDATA_GIVE_UP_AFTER \(env\): must be a positive duration.*; got "soon".*\n.*GAMEDATA_DRAIN_TIMEOUT \(env\): must be a positive duration.*; got "0s"/s,
    );
  });

  it('reads the retention as a duration and a run count, and names a bad one', () => {
    const config = loadConfig({ env: { GAMEDATA_RETENTION_AGE: '36h', GAMEDATA_RETENTION_RUNS: '500' } });
    expect([config.retentionAgeMs, config.retentionRuns]).toEqual([36 * 3_600_000, 500]);
    expect(loadConfig({ env: {}, overrides: { retentionAgeMs: 120_000 } }).retentionAgeMs).toBe(120_000);
    expect(() =>
      loadConfig({ env: { GAMEDATA_RETENTION_AGE: 'a week', GAMEDATA_RETENTION_RUNS: '5' } }),
    ).toThrow(
      /GAMEDATA_RETENTION_AGE \(env\): must be a duration.*\n.*GAMEDATA_RETENTION_RUNS \(env\): must be an integer >= 10; got "5"/s,
    );
  });

  it('reads the delivery mode (default exactly-once) and names a bad one', () => {
    expect(loadConfig({ env: {} }).delivery).toBe('exactly-once');
    expect(loadConfig({ env: { GAMEDATA_DELIVERY: 'at-least-once' } }).delivery).toBe('at-least-once');
    expect(() => loadConfig({ env: { GAMEDATA_DELIVERY: 'twice' } })).toThrow(
      /GAMEDATA_DELIVERY \(env\): .*exactly-once.*at-least-once.*; got "twice"/,
    );
  });

  it('reads what a short upstream page means (default end) and names a bad value', () => {
    expect(loadConfig({ env: {} }).shortPages).toBe('end');
    expect(loadConfig({ env: { GAMEDATA_SHORT_PAGES: 'confirm' } }).shortPages).toBe('confirm');
    expect(() => loadConfig({ env: { GAMEDATA_SHORT_PAGES: 'trust' } })).toThrow(
      /GAMEDATA_SHORT_PAGES \(env\): .*end.*confirm.*; got "trust"/,
    );
  });

  it('applies the documented defaults when nothing is set and nothing is needed', () => {
    const config = loadConfig({ env: {} });
    expect(config.topicPrefix).toBe(DEFAULT_CONFIG.topicPrefix);
    expect(config.kafkaBrokers).toEqual([]);
    expect(config.apiUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
  });

  it('treats an empty environment variable as unset', () => {
    const config = loadConfig({ env: { GAMEDATA_TOPIC_PREFIX: '  ', REDIS_URL: '' } });
    expect(config.topicPrefix).toBe('gamedata');
    expect(config.redisUrl).toBeUndefined();
  });

  it('reports every missing needed setting in one error', () => {
    const error = configError(() => loadConfig({ env: {}, need: ['api', 'kafka', 'registry', 'redis'] }));
    expect(error.issues).toHaveLength(4);
    expect(error.issues.join('\n')).toMatch(/GAMEDATA_API_URL is not set/);
    expect(error.issues.join('\n')).toMatch(/KAFKA_BROKERS is not set/);
    expect(error.issues.join('\n')).toMatch(/SCHEMA_REGISTRY_URL is not set/);
    expect(error.issues.join('\n')).toMatch(/REDIS_URL is not set/);
  });

  it('reports every invalid setting in one error, naming the setting, the rule and the value', () => {
    const error = configError(() =>
      loadConfig({
        env: {
          GAMEDATA_API_URL: 'ftp://example',
          KAFKA_BROKERS: '127.0.0.1,host:99999',
          SCHEMA_REGISTRY_URL: 'not a url',
          REDIS_URL: 'http://127.0.0.1:6379',
          GAMEDATA_TOPIC_PREFIX: 'bad/prefix',
          GAMEDATA_LOG_LEVEL: 'loud',
        },
      }),
    );
    expect(error.issues).toHaveLength(6);
    const text = error.issues.join('\n');
    expect(text).toContain('GAMEDATA_API_URL (env): must be an http(s) URL');
    expect(text).toContain('got "ftp://example"');
    expect(text).toContain('KAFKA_BROKERS (env): must be a comma-separated list of host:port');
    expect(text).toContain('REDIS_URL (env): must be a redis:// or rediss:// URL');
    expect(text).toContain('GAMEDATA_TOPIC_PREFIX (env)');
    expect(text).toContain('GAMEDATA_LOG_LEVEL (env)');
    expect(error.message).toContain('6 problems');
  });

  it('never echoes the API key in an error', () => {
    const error = configError(() =>
      loadConfig({ env: { GAMEDATA_API_KEY: '   ' }, overrides: { apiKey: ' ' } }),
    );
    expect(error.issues).toEqual([
      expect.stringContaining('GAMEDATA_API_KEY (override): must not be empty; got [REDACTED]'),
    ]);
  });

  it('merges overrides > env > config file > defaults', () => {
    const file = tempFile(
      JSON.stringify({
        topicPrefix: 'from-file',
        redisUrl: 'redis://file:1',
        kafkaBrokers: ['file:1', 'file:2'],
      }),
    );
    const config = loadConfig({
      env: { GAMEDATA_CONFIG: file, REDIS_URL: 'redis://env:2', GAMEDATA_TOPIC_PREFIX: 'from-env' },
      overrides: { topicPrefix: 'from-flag', apiUrl: undefined },
    });
    expect(config.topicPrefix).toBe('from-flag');
    expect(config.redisUrl).toBe('redis://env:2');
    expect(config.kafkaBrokers).toEqual(['file:1', 'file:2']);
    expect(config.queuePrefix).toBe('gamedata-bull');
  });

  it('reports config file problems together with the other settings', () => {
    const file = tempFile(JSON.stringify({ topicPrefx: 'typo', redisUrl: 42 }));
    const error = configError(() => loadConfig({ configFile: file, env: {}, need: ['kafka'] }));
    const text = error.issues.join('\n');
    expect(text).toContain('unknown setting "topicPrefx"');
    expect(text).toContain(`REDIS_URL (file ${file})`);
    expect(text).toContain('KAFKA_BROKERS is not set');
    expect(error.issues).toHaveLength(3);
  });

  it('reports an unreadable or malformed config file', () => {
    expect(
      configError(() => loadConfig({ configFile: '/nonexistent/gamedata.json', env: {} })).issues,
    ).toEqual([expect.stringContaining('cannot read config file /nonexistent/gamedata.json: ENOENT')]);
    expect(configError(() => loadConfig({ configFile: tempFile('{ nope'), env: {} })).issues).toEqual([
      expect.stringContaining('is not valid JSON'),
    ]);
    expect(configError(() => loadConfig({ configFile: tempFile('[1]'), env: {} })).issues).toEqual([
      expect.stringContaining('must hold a JSON object'),
    ]);
  });

  it('rejects an empty broker list when Kafka is needed', () => {
    const error = configError(() => loadConfig({ env: { KAFKA_BROKERS: ' , ' }, need: ['kafka'] }));
    expect(error.issues).toEqual([expect.stringContaining('KAFKA_BROKERS')]);
  });

  it('accepts IPv6 brokers and rediss URLs', () => {
    const config = loadConfig({
      env: { KAFKA_BROKERS: '[::1]:9092', REDIS_URL: 'rediss://user:pw@cache:6380/2' },
    });
    expect(config.kafkaBrokers).toEqual(['[::1]:9092']);
    expect(config.redisUrl).toBe('rediss://user:pw@cache:6380/2');
  });

  it('reads the worker /metrics endpoint from env, file or flag, and rejects a bad port', () => {
    expect(loadConfig({ env: {} }).metricsPort).toBeUndefined();
    expect(
      loadConfig({ env: { GAMEDATA_METRICS_PORT: '0', GAMEDATA_METRICS_HOST: '0.0.0.0' } }),
    ).toMatchObject({
      metricsPort: 0,
      metricsHost: '0.0.0.0',
    });
    expect(loadConfig({ env: { GAMEDATA_METRICS_PORT: 'off' } }).metricsPort).toBe(false);
    const file = tempFile(JSON.stringify({ metricsPort: 9500, metricsHost: '10.0.0.1' }));
    expect(loadConfig({ configFile: file, env: {} })).toMatchObject({
      metricsPort: 9500,
      metricsHost: '10.0.0.1',
    });
    expect(
      loadConfig({ env: { GAMEDATA_METRICS_PORT: '9500' }, overrides: { metricsPort: 'off' } }).metricsPort,
    ).toBe(false);
    const error = configError(() => loadConfig({ env: { GAMEDATA_METRICS_PORT: '70000' } }));
    expect(error.issues).toEqual([
      expect.stringMatching(/^GAMEDATA_METRICS_PORT \(env\): must be 0\.\.65535 or off/),
    ]);
    expect(configError(() => loadConfig({ env: { GAMEDATA_METRICS_PORT: 'x' } })).issues).toHaveLength(1);
  });
});
