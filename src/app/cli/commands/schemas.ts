/**
 * `gamedata schemas generate|register|check`: the Avro contract of the topics.
 * - generate: rewrites `schemas/*.avsc` from the model catalogue (commit the result);
 * - register: registers every `<prefix>.<resource>-value` subject from the files, BACKWARD_TRANSITIVE;
 * - check: tests the files against the registry's latest versions; exits non-zero naming each subject and change
 *   that would break consumers.
 * - drift [resource] [--json]: each drifted path (unknown fields, type changes) with counts, JSON types and dates,
 *   the catalogue change that would absorb it and whether the registry would accept it (issue 35).
 * Settings: SCHEMA_REGISTRY_URL, GAMEDATA_TOPIC_PREFIX (default `gamedata`); drift also REDIS_URL and
 * GAMEDATA_REDIS_PREFIX.
 */
import type { Command } from 'commander';
import { GamedataError, ConfigError } from '../../../foundation/errors/index.js';
import {
  createRegistryClient,
  DEFAULT_SCHEMAS_DIR,
  readSchemaFiles,
  writeSchemaFiles,
  checkSchemas,
  registerSchemas,
  testOptionalField,
} from '../../../output/encoding/index.js';
import { RESOURCES } from '../../../foundation/models/index.js';
import { readPipelineSettings, readServiceEnv } from '../../../foundation/config/index.js';
import { buildDriftReport, formatDriftReport } from '../drift-report.js';
import type { AvroRecordSchema } from '../../../output/encoding/index.js';
import type { ResourceName } from '../../../foundation/models/index.js';

interface CommonFlags {
  dir: string;
  prefix?: string;
}

async function loadSchemas(dir: string): Promise<Record<ResourceName, AvroRecordSchema>> {
  const files = await readSchemaFiles(dir);
  return Object.fromEntries(Object.entries(files).map(([r, f]) => [r, f.schema])) as Record<
    ResourceName,
    AvroRecordSchema
  >;
}

function registryFromEnv(flags: CommonFlags) {
  const env = readServiceEnv({ registry: true });
  return {
    registry: createRegistryClient({ url: env.schemaRegistryUrl }),
    topicPrefix: flags.prefix ?? env.topicPrefix,
  };
}

export function register(program: Command): void {
  const schemas = program
    .command('schemas')
    .description('Generate, register and check the Avro schemas of the topics');

  schemas
    .command('generate')
    .description('rewrite schemas/*.avsc from the model catalogue (src/foundation/models/catalogue.ts)')
    .option('--dir <path>', 'schema folder', DEFAULT_SCHEMAS_DIR)
    .action(async (flags: CommonFlags) => {
      for (const path of await writeSchemaFiles(flags.dir)) console.log(`wrote ${path}`);
    });

  schemas
    .command('register')
    .description(
      'register every <prefix>.<resource>-value subject from the schema files and set BACKWARD_TRANSITIVE',
    )
    .option('--dir <path>', 'schema folder', DEFAULT_SCHEMAS_DIR)
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .action(async (flags: CommonFlags) => {
      const { registry, topicPrefix } = registryFromEnv(flags);
      const registered = await registerSchemas({
        registry,
        topicPrefix,
        schemas: await loadSchemas(flags.dir),
      });
      for (const r of registered) console.log(`${r.subject}: schema id ${r.id}, BACKWARD_TRANSITIVE`);
    });

  schemas
    .command('check')
    .description('test the schema files against the registry; exit 1 naming each subject and breaking change')
    .option('--dir <path>', 'schema folder', DEFAULT_SCHEMAS_DIR)
    .option('--prefix <prefix>', 'topic prefix (default: GAMEDATA_TOPIC_PREFIX or "gamedata")')
    .action(async (flags: CommonFlags) => {
      const { registry, topicPrefix } = registryFromEnv(flags);
      const results = await checkSchemas({ registry, topicPrefix, schemas: await loadSchemas(flags.dir) });
      const broken = results.filter((r) => r.status === 'incompatible');
      for (const r of results) {
        if (r.status === 'new') console.log(`${r.subject}: not registered yet (no consumers to break)`);
        else if (r.status === 'compatible') console.log(`${r.subject}: compatible`);
        else {
          console.error(`${r.subject}: INCOMPATIBLE`);
          for (const change of r.changes) console.error(`  - ${change.message}`);
        }
      }
      if (broken.length > 0) {
        const summary = broken
          .map((r) => `${r.subject}: ${r.changes.map((c) => c.message).join('; ')}`)
          .join(' | ');
        throw new GamedataError(`${broken.length} subject(s) would break consumers: ${summary}`);
      }
    });

  schemas
    .command('drift [resource]')
    .description(
      'each drifted path with counts, types and dates, the catalogue change that would absorb it and whether the registry would accept it',
    )
    .option('--json', 'print JSON')
    .action(async (resource: string | undefined, flags: { json?: boolean }) => {
      if (resource !== undefined && !(RESOURCES as readonly string[]).includes(resource))
        throw new ConfigError(`unknown resource ${resource} (one of ${RESOURCES.join(', ')})`);
      const settings = readPipelineSettings({ registry: true });
      const [{ connectRedis }, { createRedisDriftStore }] = await Promise.all([
        import('../../../pipeline/queue/index.js'),
        import('../../../pipeline/drift/index.js'),
      ]);
      const redis = connectRedis(settings.redisUrl);
      try {
        const registry = createRegistryClient({ url: settings.schemaRegistryUrl });
        const report = await buildDriftReport(
          createRedisDriftStore(redis, { prefix: settings.redisPrefix }),
          (o) => testOptionalField({ registry, topicPrefix: settings.topicPrefix, ...o }),
          resource as ResourceName | undefined,
        );
        console.log(flags.json === true ? JSON.stringify(report, null, 2) : formatDriftReport(report));
      } finally {
        await redis.quit().catch(() => undefined);
      }
    });
}
