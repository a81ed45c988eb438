/**
 * The committed `schemas/*.avsc` files: one per resource (`schemas/<resource>.avsc`), generated from the catalogue.
 * The registry commands read these files (not the generator), so what is registered is what is reviewed in git.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { RESOURCES } from '../../foundation/models/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { ConfigError } from '../../foundation/errors/index.js';
import { formatSchemaFile, generateResourceSchemas } from './avro-schema.js';
import type { AvroRecordSchema } from './avro-schema.js';

/** The repository's `schemas/` folder. */
export const DEFAULT_SCHEMAS_DIR = fileURLToPath(new URL('../../../schemas/', import.meta.url));

/** `<dir>/<resource>.avsc`. */
export function schemaFilePath(dir: string, resource: ResourceName): string {
  return join(dir, `${resource}.avsc`);
}

/** Rewrites every `<resource>.avsc` from the catalogue; returns the paths written. */
export async function writeSchemaFiles(dir: string = DEFAULT_SCHEMAS_DIR): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const schemas = generateResourceSchemas();
  const written: string[] = [];
  for (const resource of RESOURCES) {
    const path = schemaFilePath(dir, resource);
    await writeFile(path, formatSchemaFile(schemas[resource]));
    written.push(path);
  }
  return written;
}

/**
 * Reads every `<resource>.avsc` as text and parsed JSON.
 * @throws ConfigError listing every missing or unparseable file.
 */
export async function readSchemaFiles(
  dir: string = DEFAULT_SCHEMAS_DIR,
): Promise<Record<ResourceName, { text: string; schema: AvroRecordSchema }>> {
  const out: Partial<Record<ResourceName, { text: string; schema: AvroRecordSchema }>> = {};
  const issues: string[] = [];
  for (const resource of RESOURCES) {
    const path = schemaFilePath(dir, resource);
    try {
      const text = await readFile(path, 'utf8');
      out[resource] = { text, schema: JSON.parse(text) as AvroRecordSchema };
    } catch (error) {
      issues.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (issues.length > 0) {
    throw new ConfigError('cannot read the Avro schema files (run `gamedata schemas generate`)', issues);
  }
  return out as Record<ResourceName, { text: string; schema: AvroRecordSchema }>;
}
