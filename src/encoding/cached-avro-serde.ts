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
import { AvroDeserializer, AvroSerializer } from '@confluentinc/schemaregistry';
import type { SchemaInfo } from '@confluentinc/schemaregistry';

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

/** AvroSerializer with an O(1) compiled-type cache (see the file comment). */
export class CachedAvroSerializer extends AvroSerializer {
  readonly #types = new Map<string, Promise<Compiled>>();

  override toType(info: SchemaInfo): Promise<Compiled> {
    return cachedToType(this.#types, info, (i) => super.toType(i));
  }
}

/** AvroDeserializer with an O(1) compiled-type cache (see the file comment). */
export class CachedAvroDeserializer extends AvroDeserializer {
  readonly #types = new Map<string, Promise<Compiled>>();

  override toType(info: SchemaInfo): Promise<Compiled> {
    return cachedToType(this.#types, info, (i) => super.toType(i));
  }
}
