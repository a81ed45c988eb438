/**
 * A private single-node Kafka for tests that stop or kill the broker (the shared stack's broker serves everyone
 * else): `scripts/stack.sh up` with its own STACK_DIR and ports; the registry and Redis ports are the shared ones,
 * which answer, so the script reuses them and starts only Kafka. With `redis: true` it starts a Redis of its own too,
 * so the test shares nothing with the `services` files but the registry (which no test stops) and can run in the
 * `stacks` lane beside them (scripts/test.sh). Its jars are linked from the shared stack when it
 * has them (else the script resolves them through Maven, cached in ~/.m2).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePorts } from './free-ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

export interface PrivateKafka {
  /** `127.0.0.1:<port>` */
  brokers: string;
  /** The private Redis (`redis: true`), else the shared one. */
  redisUrl: string;
  /** SIGKILL the broker (no controlled shutdown). */
  kill(): void;
  /** Starts the broker again (same data) and waits until it answers. */
  start(): Promise<void>;
  /** Stops the broker and deletes its folder. */
  destroy(): Promise<void>;
}

function portOf(url: string): string {
  return new URL(url.replace(/^redis/, 'http')).port;
}

/** Starts a private Kafka (about 10-30 s on a busy 2-core box). */
export async function startPrivateKafka(o: { redis?: boolean } = {}): Promise<PrivateKafka> {
  const dir = mkdtempSync(join(tmpdir(), 'gamedata-private-kafka-'));
  const shared = join(ROOT, '.stack', 'kafka', 'libs');
  if (existsSync(shared)) {
    mkdirSync(join(dir, 'kafka'), { recursive: true });
    symlinkSync(shared, join(dir, 'kafka', 'libs'));
  }
  const [kafkaPort = 0, controllerPort = 0, ownRedisPort = 0] = await freePorts(3);
  const sharedRedis = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:16379';
  const redisPort = o.redis === true ? String(ownRedisPort) : portOf(sharedRedis);
  const env = {
    ...process.env,
    STACK_DIR: dir,
    STACK_KAFKA_PORT: String(kafkaPort),
    STACK_KAFKA_CONTROLLER_PORT: String(controllerPort),
    STACK_REGISTRY_PORT: portOf(process.env['SCHEMA_REGISTRY_URL'] ?? 'http://127.0.0.1:18081'),
    STACK_REDIS_PORT: redisPort,
  };
  const up = async (): Promise<void> => {
    await run('bash', [join(ROOT, 'scripts', 'stack.sh'), 'up'], { cwd: ROOT, env, timeout: 180_000 });
  };
  await up();
  const pidFile = join(dir, 'run', 'kafka.pid');
  return {
    brokers: `127.0.0.1:${kafkaPort}`,
    redisUrl: o.redis === true ? `redis://127.0.0.1:${redisPort}` : sharedRedis,
    kill() {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      process.kill(pid, 'SIGKILL');
    },
    start: up,
    async destroy() {
      await run('bash', [join(ROOT, 'scripts', 'stack.sh'), 'down'], {
        cwd: ROOT,
        env,
        timeout: 120_000,
      }).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>` */
  redisUrl: string;
  /** Stops the Redis (SIGTERM by its pid file) and deletes its folder. */
  destroy(): Promise<void>;
}

/**
 * A private Redis only, for a `stacks`-lane file that uses the shared Kafka and registry (the lakehouse e2e): a
 * `services` file in lane 1 restarts the shared Redis (scripts/test.sh), which must not land under this file's
 * workers. `scripts/stack.sh up` with its own STACK_DIR and Redis port; Kafka and the registry answer on the shared
 * ports, so it reuses them and starts only Redis.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'gamedata-private-redis-'));
  const [port = 0] = await freePorts(1);
  const kafkaPort =
    (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:19092').split(',')[0]?.split(':')[1] ?? '19092';
  const env = {
    ...process.env,
    STACK_DIR: dir,
    STACK_KAFKA_PORT: kafkaPort,
    STACK_REGISTRY_PORT: portOf(process.env['SCHEMA_REGISTRY_URL'] ?? 'http://127.0.0.1:18081'),
    STACK_REDIS_PORT: String(port),
  };
  await run('bash', [join(ROOT, 'scripts', 'stack.sh'), 'up'], { cwd: ROOT, env, timeout: 180_000 });
  const pidFile = join(dir, 'run', 'redis.pid');
  return {
    redisUrl: `redis://127.0.0.1:${port}`,
    async destroy() {
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
      if (Number.isSafeInteger(pid) && pid > 0) {
        try {
          process.kill(pid, 'SIGTERM');
          for (let i = 0; i < 100; i++) {
            process.kill(pid, 0);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
