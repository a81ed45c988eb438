// `schemas register` / `schemas check` against the real registry, with a throwaway subject prefix: the committed
// schemas register (BACKWARD_TRANSITIVE) and check clean; adding a nullable field passes; removing or retyping a
// field fails with a non-zero exit naming the subject and the change.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServices } from '../../../helpers/services.js';
import { Transaction } from '../../../../src/foundation/models/catalogue.js';
import { extendModel, t } from '../../../../src/foundation/models/field.js';
import {
  checkSchemas,
  createRegistryClient,
  generateAvroSchema,
  generateResourceSchemas,
  writeSchemaFiles,
} from '../../../../src/output/encoding/index.js';
import type { AvroRecordSchema } from '../../../../src/output/encoding/index.js';
import { formatSchemaFile } from '../../../../src/output/encoding/avro-schema.js';
import { schemaFilePath } from '../../../../src/output/encoding/schema-files.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const services = createTestServices('schemas-check');
const prefix = services.prefix;
const dirs: string[] = [];

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...args: string[]): Promise<CliResult> {
  const env = {
    ...process.env,
    SCHEMA_REGISTRY_URL: services.urls.schemaRegistryUrl,
    GAMEDATA_TOPIC_PREFIX: prefix,
  };
  try {
    const { stdout, stderr } = await promisify(execFile)('npx', ['tsx', 'src/app/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A schema folder equal to the committed one except for the transactions schema. */
async function folderWith(transactions: AvroRecordSchema): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gamedata-schemas-'));
  dirs.push(dir);
  await writeSchemaFiles(dir);
  await writeFile(schemaFilePath(dir, 'transactions'), formatSchemaFile(transactions));
  return dir;
}

const clone = (s: AvroRecordSchema): AvroRecordSchema => JSON.parse(JSON.stringify(s)) as AvroRecordSchema;
const subject = `${prefix}.transactions-value`;

beforeAll(async () => {
  const registered = await cli('schemas', 'register');
  expect(registered.code, registered.stderr).toBe(0);
  expect(registered.stdout).toContain(`${subject}: schema id`);
});

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await services.cleanup();
});

describe('schemas register / check against the real registry', () => {
  it('registers every subject as BACKWARD_TRANSITIVE and the committed files check clean', async () => {
    const registry = createRegistryClient({ url: services.urls.schemaRegistryUrl });
    expect(await registry.getCompatibility(subject)).toBe('BACKWARD_TRANSITIVE');
    const checked = await cli('schemas', 'check');
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout.match(/: compatible/g)).toHaveLength(6);
  });

  it('passes a new nullable field (generated from an extended catalogue model)', async () => {
    const extended = generateAvroSchema(
      extendModel(Transaction, 'Transaction', { sellerCountryId: t.string, tradedAt: t.datetime }),
    );
    const dir = await folderWith(extended);
    const checked = await cli('schemas', 'check', '--dir', dir);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain(`${subject}: compatible`);
    const registry = createRegistryClient({ url: services.urls.schemaRegistryUrl });
    const [result] = await checkSchemas({
      registry,
      topicPrefix: prefix,
      schemas: { transactions: extended },
    });
    expect(result?.registryCompatible).toBe(true);
  });

  it('fails a removed field, naming the subject and the field', async () => {
    const removed = clone(generateResourceSchemas().transactions);
    removed.fields = removed.fields.filter((f) => f.name !== 'sellerId');
    const checked = await cli('schemas', 'check', '--dir', await folderWith(removed));
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain(`${subject}: INCOMPATIBLE`);
    expect(checked.stderr).toContain('field "sellerId" was removed');
  });

  it('fails a retyped field, and the registry agrees it is incompatible', async () => {
    const retyped = clone(generateResourceSchemas().transactions);
    const money = retyped.fields.find((f) => f.name === 'money');
    if (money === undefined) throw new Error('fixture');
    money.type = ['null', 'string'];
    const checked = await cli('schemas', 'check', '--dir', await folderWith(retyped));
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('field "money" changed type from null | double to null | string');
    const registry = createRegistryClient({ url: services.urls.schemaRegistryUrl });
    const [result] = await checkSchemas({
      registry,
      topicPrefix: prefix,
      schemas: { transactions: retyped },
    });
    expect(result?.status).toBe('incompatible');
    expect(result?.registryCompatible).toBe(false);
  });

  it('registering an incompatible schema is refused by the registry with the subject named', async () => {
    const retyped = clone(generateResourceSchemas().transactions);
    const createdAt = retyped.fields.find((f) => f.name === 'createdAt');
    if (createdAt === undefined) throw new Error('fixture');
    createdAt.type = ['null', 'string'];
    const registered = await cli('schemas', 'register', '--dir', await folderWith(retyped));
    expect(registered.code).toBe(1);
    expect(registered.stderr).toContain(`registering ${subject}`);
  });
});
