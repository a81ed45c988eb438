/**
 * E2E harness: a simulator upstream, the real Kafka / registry / Redis (addresses from the services global setup),
 * a unique topic / queue / key prefix, schemas registered and topics created, and helpers to run a backfill and
 * verify a resource against the simulator's truth. `cleanup()` deletes everything it created.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SimulatorOptions } from '../../tools/simulator/options.js';
import { startSimulator, type Simulator } from '../../tools/simulator/start-simulator.js';
import { createRegistryClient } from '../../src/output/encoding/registry-client.js';
import { createRecordDecoder } from '../../src/output/encoding/record-decoder.js';
import { readSchemaFiles } from '../../src/output/encoding/schema-files.js';
import { deleteSubjects, registerSchemas } from '../../src/output/encoding/schema-registration.js';
import type { AvroRecordSchema } from '../../src/output/encoding/avro-schema.js';
import { createTopics, deleteTopics } from '../../src/output/kafka/admin/create-topics.js';
import { createPipelineRuntime, type PipelineRuntime } from '../../src/app/index.js';
import {
  connectRedis,
  startBackfill,
  startPipelineWorkers,
  waitForRun,
  type PipelineWorkers,
} from '../../src/pipeline/queue/index.js';
import type { PipelineSettings } from '../../src/foundation/config/index.js';
import type { RunResult } from '../../src/pipeline/planner/index.js';
import type { BackfillRequest, PlanBackfillOptions } from '../../src/pipeline/planner/index.js';
import type { ResourceName } from '../../src/foundation/models/resources.js';
import { verifyResource, type VerifyReport } from '../../src/app/verify/index.js';

export interface Harness {
  sim: Simulator;
  settings: PipelineSettings;
  /** Env for child worker processes. */
  env: NodeJS.ProcessEnv;
  runtime(): Promise<PipelineRuntime>;
  startWorkers(concurrency?: number): Promise<PipelineWorkers>;
  backfill(
    request: Omit<BackfillRequest, 'until'> & { until?: number },
    timeoutMs?: number,
  ): Promise<RunResult>;
  /** Enqueues only (workers run elsewhere). */
  /** `plan`: the planner's options (e.g. `{ partition: 'countryId' }`, the CLI's default). */
  enqueue(
    request: Omit<BackfillRequest, 'until'> & { until?: number },
    plan?: PlanBackfillOptions,
  ): Promise<string>;
  wait(runId: string, timeoutMs?: number): Promise<RunResult>;
  verify(resource: ResourceName): Promise<VerifyReport>;
  cleanup(): Promise<void>;
}

export function serviceSettings(): { kafkaBrokers: string[]; schemaRegistryUrl: string; redisUrl: string } {
  const brokers = (process.env['KAFKA_BROKERS'] ?? '').split(',').filter((b) => b !== '');
  const schemaRegistryUrl = process.env['SCHEMA_REGISTRY_URL'] ?? '';
  const redisUrl = process.env['REDIS_URL'] ?? '';
  if (brokers.length === 0 || schemaRegistryUrl === '' || redisUrl === '') {
    throw new Error(
      'KAFKA_BROKERS, SCHEMA_REGISTRY_URL and REDIS_URL must be set (the services global setup sets them)',
    );
  }
  return { kafkaBrokers: brokers, schemaRegistryUrl, redisUrl };
}

export async function createHarness(label: string, simOptions: SimulatorOptions = {}): Promise<Harness> {
  const svc = serviceSettings();
  const id = randomUUID().slice(0, 8);
  const sim = await startSimulator({ scale: 'small', seed: 1, port: 0, ...simOptions });
  const settings: PipelineSettings = {
    apiUrl: sim.url,
    apiKey: 'e2e-key',
    kafkaBrokers: svc.kafkaBrokers,
    schemaRegistryUrl: svc.schemaRegistryUrl,
    redisUrl: svc.redisUrl,
    topicPrefix: `e2e-${label}-${id}`,
    queuePrefix: `e2eq-${label}-${id}`,
    redisPrefix: `e2er-${label}-${id}`,
  };
  const registry = createRegistryClient({ url: settings.schemaRegistryUrl });
  const files = await readSchemaFiles();
  const schemas = Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])) as Record<
    ResourceName,
    AvroRecordSchema
  >;
  await registerSchemas({ registry, topicPrefix: settings.topicPrefix, schemas });
  await createTopics({ brokers: settings.kafkaBrokers, topicPrefix: settings.topicPrefix, partitions: 3 });

  const runtimes: PipelineRuntime[] = [];
  const workers: PipelineWorkers[] = [];
  const redises: Redis[] = [];
  const control = connectRedis(settings.redisUrl);
  redises.push(control);
  const decoder = createRecordDecoder({ registry, topicPrefix: settings.topicPrefix });

  const h: Harness = {
    sim,
    settings,
    env: {
      ...process.env,
      GAMEDATA_API_URL: settings.apiUrl,
      GAMEDATA_API_KEY: settings.apiKey,
      KAFKA_BROKERS: settings.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: settings.schemaRegistryUrl,
      REDIS_URL: settings.redisUrl,
      GAMEDATA_TOPIC_PREFIX: settings.topicPrefix,
      GAMEDATA_QUEUE_PREFIX: settings.queuePrefix,
      GAMEDATA_REDIS_PREFIX: settings.redisPrefix,
    },
    async runtime() {
      const rt = await createPipelineRuntime(settings, { client: { timeoutMs: 5_000 } });
      runtimes.push(rt);
      return rt;
    },
    async startWorkers(concurrency = 32) {
      const rt = await h.runtime();
      const bull = connectRedis(settings.redisUrl);
      redises.push(bull);
      const w = startPipelineWorkers({ connection: bull, prefix: settings.queuePrefix, concurrency }, rt);
      workers.push(w);
      return w;
    },
    async enqueue(request, plan) {
      const rt = runtimes[0] ?? (await h.runtime());
      const planned = await startBackfill(
        { ...request, until: request.until ?? sim.now() },
        {
          connection: control,
          prefix: settings.queuePrefix,
          planner: rt.planner,
          counters: rt.counters,
          runs: rt.runs,
          users: rt.users,
          ...(plan === undefined ? {} : { plan }),
        },
      );
      return planned.run.runId;
    },
    wait(runId, timeoutMs = 240_000) {
      return waitForRun(runId, { connection: control, prefix: settings.queuePrefix, pollMs: 250, timeoutMs });
    },
    async backfill(request, timeoutMs) {
      return h.wait(await h.enqueue(request), timeoutMs);
    },
    verify(resource) {
      return verifyResource({
        resource,
        brokers: settings.kafkaBrokers,
        topicPrefix: settings.topicPrefix,
        decoder,
        truth: sim.truth(resource),
        malformedIds: new Set(sim.malformed(resource).map((m) => m._id)),
      });
    },
    async cleanup() {
      for (const w of workers) await w.close();
      for (const rt of runtimes) await rt.close().catch(() => undefined);
      for (const p of [settings.queuePrefix, settings.redisPrefix]) {
        const keys = await control.keys(`${p}*`);
        for (let i = 0; i < keys.length; i += 500) await control.del(...keys.slice(i, i + 500));
      }
      for (const r of redises) await r.quit().catch(() => undefined);
      await deleteTopics({ brokers: settings.kafkaBrokers, topicPrefix: settings.topicPrefix }).catch(
        () => undefined,
      );
      await deleteSubjects(registry, settings.topicPrefix).catch(() => undefined);
      await sim.close();
    },
  };
  return h;
}
