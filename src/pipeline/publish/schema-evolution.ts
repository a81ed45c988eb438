/**
 * The `evolve` schema contract (issue 35): a new field seen with one consistent scalar type becomes an optional
 * field (`["null", type]`, default null) of the resource's subject, after the registry's compatibility check under
 * the subject's level (BACKWARD_TRANSITIVE): never a breaking change. Then new records carry it as a real field.
 *
 * How workers learn the new version, without losing or double-publishing a record:
 * - The page encoder asks this module only when a page of an `evolve` resource has a `new_field` (so a page without
 *   drift costs nothing). Nothing of the page has been sent yet.
 * - The latest version is read past the client's 300 s cache. If it already has the field (another worker evolved
 *   it), the answer is "re-encode": the page is encoded again with that version. Else one worker at a time (a Redis
 *   lock per subject) re-reads the latest, adds every candidate at its level, tests compatibility and registers.
 * - Any worker whose page carries the field thus learns the version within that page. Records encoded before (on a
 *   worker that had not met the field yet, or while a version was being registered) keep the value in `_extra`:
 *   nothing is lost, and no record is sent twice, since a page is sent once, after its (re-)encoding.
 * - A candidate that cannot evolve (several types, an object or array, a path with no record, the registry says
 *   incompatible) is refused and not asked again for `retryAfterMs`; its values stay in `_extra` (freeze).
 * Each field registered is also written to `<prefix>:drift-evolved:<resource>` (path -> subject, id, kind, time), so
 * `schemas drift` and operators can see what evolved and when. Never rejects: a registry failure leaves the page as
 * it was encoded (values in `_extra`).
 */
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { RegistryClient, AvroRecordSchema } from '../../output/encoding/index.js';
import type { ResourceName } from '../../foundation/models/index.js';
import { DEFAULT_TOPIC_PREFIX, topicName, valueSubjectName } from '../../foundation/models/index.js';
import { withOptionalField } from '../../output/encoding/index.js';
import type { DriftStore, JsonType, PageDrift, PageDriftEntry, ResourceDrift } from '../drift/index.js';
import { FieldExistsError, GamedataError } from '../../foundation/errors/index.js';
import { sleep } from '../../foundation/retry/index.js';

/** The scalar kinds a field can evolve with. */
export type EvolvedKind = 'string' | 'integer' | 'number' | 'boolean';

export interface EvolvedField {
  resource: ResourceName;
  subject: string;
  /** The drift path (`referrerId`, `item.foo`). */
  path: string;
  kind: EvolvedKind;
  /** The schema id registered (or found) with the field. */
  id: number;
  atMs: number;
}

export interface SchemaEvolutionOptions {
  registry: RegistryClient;
  /** Redis for the per-subject lock and the record of evolved fields. */
  redis: Redis;
  /** `GAMEDATA_REDIS_PREFIX`. @default 'gamedata' */
  redisPrefix?: string;
  /** @default 'gamedata' */
  topicPrefix?: string;
  /** The resources on the `evolve` contract. */
  resources: readonly ResourceName[];
  /** The deployment-wide drift (types seen so far): a path seen with several types does not evolve. @default none */
  store?: DriftStore;
  /** How long a refused candidate is not asked again. @default 60_000 */
  retryAfterMs?: number;
  /** Longest wait for another worker's lock. @default 15_000 */
  lockWaitMs?: number;
  /** Told of each field registered, and of each refusal with its reason (logs). @default none */
  onEvolved?: (field: EvolvedField) => void;
  onRefused?: (resource: ResourceName, path: string, reason: string) => void;
  now?: () => number;
}

export const DEFAULT_SCHEMA_EVOLUTION_OPTIONS = { retryAfterMs: 60_000, lockWaitMs: 15_000 } as const;

interface Candidate {
  path: string;
  parentPath: string;
  name: string;
  kind: EvolvedKind;
}

/** The one scalar kind of a path's types (integer and number together are number), or a reason it has none. */
export function evolvableKind(
  types: Partial<Record<JsonType, number>>,
): { kind: EvolvedKind } | { refused: string } {
  const seen = (Object.keys(types) as JsonType[]).filter((t) => t !== 'null' && (types[t] ?? 0) > 0);
  if (seen.length === 0) return { refused: 'only null values seen' };
  const numeric = seen.every((t) => t === 'integer' || t === 'number');
  if (numeric) return { kind: seen.includes('number') ? 'number' : 'integer' };
  if (seen.length > 1) return { refused: `several types seen (${seen.join(', ')})` };
  const [only] = seen;
  if (only === 'string' || only === 'boolean') return { kind: only };
  return { refused: `${String(only)} values stay in _extra (only scalar fields evolve)` };
}

/**
 * The page's new fields that can evolve, each with its kind from the page's types and the deployment's so far
 * (`stored`); each that cannot is refused, except one seen only as null (not refused: the next page asks again).
 */
function candidatesOf(
  entries: readonly PageDriftEntry[],
  stored: ResourceDrift | undefined,
  refuse: (path: string, reason: string) => void,
): Candidate[] {
  const candidates: Candidate[] = [];
  for (const e of entries) {
    const all = stored?.records.find((r) => r.kind === 'new_field' && r.path === e.path)?.types;
    const merged: Partial<Record<JsonType, number>> = { ...all };
    for (const [t, n] of Object.entries(e.types) as [JsonType, number][]) merged[t] = (merged[t] ?? 0) + n;
    const verdict = evolvableKind(merged);
    if ('refused' in verdict) {
      if (verdict.refused !== 'only null values seen') refuse(e.path, verdict.refused);
      continue;
    }
    candidates.push({ path: e.path, kind: verdict.kind, ...splitPath(e.path) });
  }
  return candidates;
}

function splitPath(path: string): { parentPath: string; name: string } {
  const dot = path.lastIndexOf('.');
  return dot < 0
    ? { parentPath: '', name: path }
    : { parentPath: path.slice(0, dot), name: path.slice(dot + 1) };
}

/** Whether `schema` already has `name` in the record at `parentPath`. */
function hasField(schema: AvroRecordSchema, parentPath: string, name: string): boolean {
  try {
    withOptionalField(schema, parentPath, name, 'string');
    return false;
  } catch (error) {
    return error instanceof FieldExistsError; // else no record at the path: not there
  }
}

/**
 * Runs `fn` holding the Redis lock `key` (one worker at a time evolves a subject; the lock expires after 30 s if its
 * holder dies), waiting for it at most `lockWaitMs`. The wait's timeout throws, and the attempt's chain catches it:
 * its candidates are refused for `retryAfterMs`, their values kept in `_extra`.
 */
async function withSubjectLock<T>(
  o: { redis: Redis; key: string; lockWaitMs: number; now: () => number },
  fn: () => Promise<T>,
): Promise<T> {
  const token = randomUUID();
  const deadline = o.now() + o.lockWaitMs;
  while ((await o.redis.set(o.key, token, 'PX', 30_000, 'NX')) !== 'OK') {
    if (o.now() > deadline) throw new GamedataError(`schema evolution: another worker holds ${o.key}`);
    await sleep(100);
  }
  try {
    return await fn();
  } finally {
    await o.redis
      .eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end",
        1,
        o.key,
        token,
      )
      .catch(() => undefined);
  }
}

/** The `evolve` hook of the page encoder (`PagePublisherOptions.evolve`). */
export function createSchemaEvolution(
  options: SchemaEvolutionOptions,
): (resource: ResourceName, drift: PageDrift) => Promise<boolean> {
  const o = { ...DEFAULT_SCHEMA_EVOLUTION_OPTIONS, ...options };
  const now = o.now ?? Date.now;
  const redisPrefix = o.redisPrefix ?? 'gamedata';
  const on = new Set(o.resources);
  const refusedUntil = new Map<string, number>();
  const chains = new Map<ResourceName, Promise<unknown>>();
  const subjectOf = (r: ResourceName): string =>
    valueSubjectName(topicName(o.topicPrefix ?? DEFAULT_TOPIC_PREFIX, r));

  const refuse = (resource: ResourceName, path: string, reason: string): void => {
    refusedUntil.set(`${resource}\t${path}`, now() + o.retryAfterMs);
    o.onRefused?.(resource, path, reason);
  };

  const latest = async (subject: string): Promise<AvroRecordSchema> => {
    o.registry.clearLatestCaches();
    return JSON.parse((await o.registry.getLatestSchemaMetadata(subject)).schema) as AvroRecordSchema;
  };

  const withLock = <T>(subject: string, fn: () => Promise<T>): Promise<T> =>
    withSubjectLock({ ...o, now, key: `${redisPrefix}:schema-evolve-lock:${subject}` }, fn);

  async function attempt(resource: ResourceName, entries: PageDriftEntry[]): Promise<boolean> {
    const subject = subjectOf(resource);
    const stored = o.store === undefined ? undefined : (await o.store.read(resource))[0];
    const candidates = candidatesOf(entries, stored, (path, reason) => refuse(resource, path, reason));
    if (candidates.length === 0) return false;
    // Another worker may have evolved them already: then this page only needs encoding again.
    let schema = await latest(subject);
    let missing = candidates.filter((c) => !hasField(schema, c.parentPath, c.name));
    if (missing.length === 0) return true;
    const registered = await withLock(subject, async () => {
      schema = await latest(subject); // again, under the lock
      missing = missing.filter((c) => !hasField(schema, c.parentPath, c.name));
      let next = schema;
      const added: Candidate[] = [];
      for (const c of missing) {
        try {
          next = withOptionalField(next, c.parentPath, c.name, c.kind);
          added.push(c);
        } catch (error) {
          refuse(resource, c.path, (error as Error).message);
        }
      }
      if (added.length === 0) return [];
      const info = { schemaType: 'AVRO', schema: JSON.stringify(next) };
      if (!(await o.registry.testSubjectCompatibility(subject, info))) {
        for (const c of added)
          refuse(resource, c.path, `the registry (${subject}) rejects it as incompatible`);
        return [];
      }
      const id = await o.registry.register(subject, info, false);
      const atMs = now();
      const fields = added.map((c): EvolvedField => ({
        resource,
        subject,
        path: c.path,
        kind: c.kind,
        id,
        atMs,
      }));
      const record = fields.flatMap((f) => [f.path, JSON.stringify({ subject, id, kind: f.kind, atMs })]);
      await o.redis.hset(`${redisPrefix}:drift-evolved:${resource}`, ...record).catch(() => undefined);
      return fields;
    });
    for (const f of registered) o.onEvolved?.(f);
    return registered.length > 0 || missing.length < candidates.length;
  }

  return async (resource, drift) => {
    if (!on.has(resource)) return false;
    const t = now();
    const entries = drift.entries.filter(
      (e) => e.kind === 'new_field' && (refusedUntil.get(`${resource}\t${e.path}`) ?? 0) <= t,
    );
    if (entries.length === 0) return false;
    // One attempt at a time per resource in this process; a later page's attempt sees what the earlier one did.
    const previous = chains.get(resource) ?? Promise.resolve();
    const run = previous.then(() => attempt(resource, entries));
    const settled = run.catch((error: unknown) => {
      for (const e of entries) refuse(resource, e.path, `evolving failed: ${(error as Error).message}`);
      return false;
    });
    chains.set(resource, settled);
    return settled;
  };
}

/** The fields evolved into `resource`'s subject (what `createSchemaEvolution` recorded), by path. */
export async function readEvolvedFields(
  redis: Redis,
  redisPrefix: string,
  resource: ResourceName,
): Promise<Map<string, { subject: string; id: number; kind: EvolvedKind; atMs: number }>> {
  const hash = await redis.hgetall(`${redisPrefix}:drift-evolved:${resource}`);
  return new Map(
    Object.entries(hash).map(([path, json]) => [
      path,
      JSON.parse(json) as { subject: string; id: number; kind: EvolvedKind; atMs: number },
    ]),
  );
}
