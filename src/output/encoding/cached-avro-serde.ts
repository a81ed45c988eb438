/**
 * `@confluentinc/schemaregistry`'s AvroSerializer / AvroDeserializer with one change: the compiled avsc type of a
 * schema is cached by the schema text itself instead of by the library's key, which re-stringifies the whole schema
 * text (`json-stringify-deterministic`) on every call, two to three times per message (serialize, subject name,
 * record name). A JS Map keyed by the same string instance hashes it once, so a lookup is O(1): 0-30 % more
 * records per CPU-second in bench/encoding.ts. The library's other per-message costs stay (it JSON.parses the whole
 * schema to look for inline tags, stringifies it for its id cache key, takes a mutex for the latest version), which
 * is why the serializer path is still ~5x the pure mapping + avsc path. Everything else (latest-version lookup,
 * validation, framing) is the library's.
 * Isolated here so it can be dropped when the library caches cheaply itself.
 */
import {
  AvroDeserializer,
  AvroSerializer,
  SubjectNameStrategyType,
  type AvroDeserializerConfig,
  type AvroSerializerConfig,
  type Client,
  type RuleRegistry,
  type SchemaInfo,
  type SerdeType,
} from './schema-registry-library.js';

type Compiled = Awaited<ReturnType<AvroSerializer['toType']>>;

/** Few schemas per process (six subjects, a handful of versions): a small bound is plenty. */
const MAX_CACHED_SCHEMAS = 256;

function cachedToType(
  cache: Map<string, Promise<Compiled>>,
  info: SchemaInfo,
  compile: (info: SchemaInfo) => Promise<Compiled>,
): Promise<Compiled> {
  // Schemas with references resolve them through the registry: leave those to the library.
  if (info.references !== undefined && info.references.length > 0) return compile(info);
  let compiled = cache.get(info.schema);
  if (compiled === undefined) {
    if (cache.size >= MAX_CACHED_SCHEMAS) cache.clear();
    compiled = compile(info);
    cache.set(info.schema, compiled);
    compiled.catch(() => cache.delete(info.schema));
  }
  return compiled;
}

/**
 * The subject of a topic's values is `<topic>-value` (TopicNameStrategy) unless the caller chose otherwise. The
 * library's default (ASSOCIATED) first asks the registry `GET /associations/resources/...` for every topic: a call
 * the pipeline does not need, which Apicurio's Confluent-compatible API does not serve, and which timed out during a
 * registry cold start in CI.
 */
function withTopicSubjects<C extends { subjectNameStrategyType?: unknown; subjectNameStrategy?: unknown }>(
  conf: C,
): C {
  if (conf.subjectNameStrategyType != null || conf.subjectNameStrategy != null) return conf;
  return { ...conf, subjectNameStrategyType: SubjectNameStrategyType.TOPIC };
}

/** AvroSerializer with an O(1) compiled-type cache (see the file comment); subjects by topic name. */
export class CachedAvroSerializer extends AvroSerializer {
  readonly #types = new Map<string, Promise<Compiled>>();

  constructor(client: Client, serdeType: SerdeType, conf: AvroSerializerConfig, ruleRegistry?: RuleRegistry) {
    super(client, serdeType, withTopicSubjects(conf), ruleRegistry);
  }

  override toType(info: SchemaInfo): Promise<Compiled> {
    return cachedToType(this.#types, info, (i) => super.toType(i));
  }
}

/**
 * AvroDeserializer with an O(1) compiled-type cache (see the file comment); subjects by topic name, so the writer
 * schema is looked up by the frame's id alone (`GET /schemas/ids/{id}`, cached), never through `/associations`.
 */
export class CachedAvroDeserializer extends AvroDeserializer {
  readonly #types = new Map<string, Promise<Compiled>>();

  constructor(
    client: Client,
    serdeType: SerdeType,
    conf: AvroDeserializerConfig,
    ruleRegistry?: RuleRegistry,
  ) {
    super(client, serdeType, withTopicSubjects(conf), ruleRegistry);
  }

  override toType(info: SchemaInfo): Promise<Compiled> {
    return cachedToType(this.#types, info, (i) => super.toType(i));
  }
}

/** What the direct path of {@link DirectAvroSerializer} needs for one topic: resolved by the library, then reused. */
export interface WritePlan {
  /** The schema text the record is written with (the subject's latest version when the plan was resolved). */
  schema: string;
  /** 0x00 + the 4-byte big-endian schema id: the library's `PrefixSchemaIdSerializer` header. */
  header: Buffer;
  /** The compiled avsc type of the subject's latest schema (the library's own `toType`). */
  type: Compiled[0];
  /** Whether records may be written directly (no rules, plain prefix framing); else the library writes each one. */
  direct: boolean;
}

interface PlanEntry {
  plan: Promise<WritePlan>;
  /** The resolved plan, once it is (read synchronously on the hot path). */
  ready: WritePlan | undefined;
  expiresAt: number;
}

export interface DirectAvroSerializerOptions {
  /**
   * How long a topic's resolved (schema id, compiled type) is reused before it is looked up again through the
   * library (`getSchemaId`, i.e. the client's latest-version cache, so a newly registered version is seen at most
   * this much later than the library alone would see it). @default 1000
   */
  planTtlMs?: number;
  /** Clock (tests). @default Date.now */
  now?: () => number;
}

/** Scratch space for the direct write; larger values take avsc's own `toBuffer`. Shared: writes are synchronous. */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Buffer | undefined;

/**
 * {@link CachedAvroSerializer} whose `serialize` skips the library's per-message overhead when it provably does
 * nothing: the library still resolves the subject's latest schema and id (`getSchemaId`, with `useLatestVersion`
 * and auto-registration off: never a schema inferred from the value) and compiles it (`toType`), once per topic per
 * `planTtlMs`; each record is then checked (`isValid`) and written as 0x00 + id + `type.toBuffer(value)`, the same
 * bytes the library writes (proved for every resource in test/unit/output/encoding/cached-avro-serde.test.ts).
 * The library's own `serialize` still handles, record by record: schemas with domain or encoding rules (field
 * transforms, encryption, conditions), any other way of choosing the schema (auto-registration, `useSchemaId`,
 * `useLatestWithMetadata`, inferred schemas), a custom `schemaIdSerializer`, `bytes` schemas, and every value that
 * is not valid for the schema (so its error message is exactly the library's).
 */
export class DirectAvroSerializer extends CachedAvroSerializer {
  readonly #plans = new Map<string, PlanEntry>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #eligible: boolean;

  constructor(
    client: Client,
    serdeType: SerdeType,
    conf: AvroSerializerConfig,
    ruleRegistry?: RuleRegistry,
    options: DirectAvroSerializerOptions = {},
  ) {
    super(client, serdeType, conf, ruleRegistry);
    this.#ttlMs = options.planTtlMs ?? 1000;
    this.#now = options.now ?? Date.now;
    // Only when the schema depends on the topic alone, never on the value.
    this.#eligible =
      conf.useLatestVersion === true &&
      conf.autoRegisterSchemas !== true &&
      (conf.useSchemaId === undefined || conf.useSchemaId === null || conf.useSchemaId < 0) &&
      (conf.useLatestWithMetadata === undefined ||
        conf.useLatestWithMetadata === null ||
        Object.keys(conf.useLatestWithMetadata).length === 0) &&
      (conf.schemaIdSerializer === undefined || conf.schemaIdSerializer === null);
  }

  async #resolve(topic: string, msg: unknown): Promise<WritePlan> {
    const [schemaId, info] = await this.getSchemaId('AVRO', topic, msg);
    const [type] = await this.toType(info);
    const rules = info.ruleSet;
    const direct =
      (rules?.domainRules?.length ?? 0) === 0 &&
      (rules?.encodingRules?.length ?? 0) === 0 &&
      typeof schemaId.id === 'number' &&
      (schemaId.messageIndexes === undefined || schemaId.messageIndexes === null) &&
      type.typeName !== 'bytes';
    const header = Buffer.alloc(5);
    if (direct) header.writeInt32BE(schemaId.id as number, 1);
    return { schema: info.schema, header, type, direct };
  }

  #plan(topic: string, msg: unknown): PlanEntry {
    const now = this.#now();
    let entry = this.#plans.get(topic);
    if (entry === undefined || entry.expiresAt <= now) {
      const fresh: PlanEntry = {
        plan: this.#resolve(topic, msg),
        ready: undefined,
        expiresAt: now + this.#ttlMs,
      };
      fresh.plan.then(
        (p) => (fresh.ready = p),
        () => {
          if (this.#plans.get(topic) === fresh) this.#plans.delete(topic);
        },
      );
      this.#plans.set(topic, fresh);
      entry = fresh;
    }
    return entry;
  }

  override async serialize(
    topic: string,
    msg: unknown,
    headers?: Parameters<AvroSerializer['serialize']>[2],
  ): Promise<Buffer> {
    if (!this.#eligible || msg === null || msg === undefined) return super.serialize(topic, msg, headers);
    const entry = this.#plan(topic, msg);
    const plan = entry.ready ?? (await entry.plan);
    return this.serializeWith(topic, plan, msg, headers);
  }

  /**
   * The plan `topic`'s records are written with now: the resolved one when it is (synchronously, the hot path),
   * else a promise of it. The caller maps its value for `plan.schema`, then calls {@link serializeWith}, so the
   * value's fields always match the schema they are written with (issue 35's evolved fields).
   */
  planFor(topic: string): WritePlan | Promise<WritePlan> {
    const entry = this.#plan(topic, {});
    return entry.ready ?? entry.plan;
  }

  /** `msg` written with `plan` (see {@link planFor}); the library's own path when the direct one does not apply. */
  serializeWith(
    topic: string,
    plan: WritePlan,
    msg: unknown,
    headers?: Parameters<AvroSerializer['serialize']>[2],
  ): Promise<Buffer> {
    if (!this.#eligible || !plan.direct || msg === null || msg === undefined || !plan.type.isValid(msg))
      return super.serialize(topic, msg, headers);
    return Promise.resolve(writeFramed(plan, msg));
  }

  /** Forgets `topic`'s plan: the next record resolves the subject's latest version again. */
  invalidate(topic: string): void {
    this.#plans.delete(topic);
  }
}

/** 0x00 + id + Avro binary in one buffer (one copy out of the scratch space). */
function writeFramed(plan: WritePlan, msg: unknown): Buffer {
  scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES);
  const end = plan.type.encode(msg, scratch, 5);
  if (end < 0) return Buffer.concat([plan.header, plan.type.toBuffer(msg)]);
  const out = Buffer.allocUnsafe(end);
  plan.header.copy(out, 0);
  scratch.copy(out, 5, 5, end);
  return out;
}
