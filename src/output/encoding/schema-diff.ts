/**
 * Finds the changes between a registered schema and a local one that would break the contract for consumers:
 * a field removed, a field's type changed (at any depth, including inside unions, arrays and sub-records), or a
 * field added without a default. Stricter than Avro's BACKWARD rule on purpose: Avro lets a reader drop a field,
 * but our schemas promise every spec field to downstream sinks, so a removed field is a break too.
 */
import type { AvroField, AvroRecordSchema, AvroSchema } from './avro-schema.js';

export interface SchemaChange {
  /** Dotted field path from the record root, e.g. `item.skills.attack`; arrays add `[]`. */
  path: string;
  kind: 'removed' | 'retyped' | 'added-without-default';
  /** One readable sentence, e.g. `field "comments" was removed`. */
  message: string;
}

type Names = Map<string, AvroRecordSchema>;

function fullName(name: string, namespace: string | undefined): string {
  return name.includes('.') || namespace === undefined ? name : `${namespace}.${name}`;
}

/** Every named record of a schema, by full name (nested records inherit the enclosing namespace). */
function collectNames(schema: AvroSchema, namespace: string | undefined, names: Names): void {
  if (Array.isArray(schema)) {
    for (const branch of schema) collectNames(branch, namespace, names);
  } else if (typeof schema === 'object') {
    if (schema.type === 'record') {
      const ns = schema.namespace ?? namespace;
      names.set(fullName(schema.name, ns), schema);
      for (const field of schema.fields) collectNames(field.type, ns, names);
    } else if (schema.type === 'array') {
      collectNames(schema.items, namespace, names);
    } else if (schema.type === 'map') {
      collectNames(schema.values, namespace, names);
    }
  }
}

function resolveRef(schema: AvroSchema, names: Names): AvroSchema {
  if (typeof schema !== 'string') return schema;
  return names.get(schema) ?? [...names.entries()].find(([n]) => n.endsWith(`.${schema}`))?.[1] ?? schema;
}

/** A short description of a type for messages and branch matching: `string`, `timestamp-millis`, `record Equipment`. */
function describe(schema: AvroSchema, names: Names): string {
  const s = resolveRef(schema, names);
  if (typeof s === 'string') return s;
  if (Array.isArray(s)) return s.map((b) => describe(b, names)).join(' | ');
  if (s.type === 'record') return `record ${s.name.split('.').pop() ?? s.name}`;
  if (s.type === 'array') return `array<${describe(s.items, names)}>`;
  if (s.type === 'map') return `map<${describe(s.values, names)}>`;
  return s.logicalType;
}

/** The branch kind used to pair union branches: records pair by name, arrays with arrays, others by description. */
function kindOf(schema: AvroSchema, names: Names): string {
  const s = resolveRef(schema, names);
  if (typeof s === 'object' && !Array.isArray(s) && s.type === 'array') return 'array';
  if (typeof s === 'object' && !Array.isArray(s) && s.type === 'map') return 'map';
  return describe(s, names);
}

interface Ctx {
  oldNames: Names;
  newNames: Names;
  changes: SchemaChange[];
  seen: Set<string>;
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function retyped(ctx: Ctx, path: string, from: AvroSchema, to: AvroSchema): void {
  const a = describe(from, ctx.oldNames);
  const b = describe(to, ctx.newNames);
  ctx.changes.push({ path, kind: 'retyped', message: `field "${path}" changed type from ${a} to ${b}` });
}

function compareTypes(ctx: Ctx, path: string, oldType: AvroSchema, newType: AvroSchema): void {
  const o = resolveRef(oldType, ctx.oldNames);
  const n = resolveRef(newType, ctx.newNames);
  const oBranches = Array.isArray(o) ? o : [o];
  const nBranches = Array.isArray(n) ? n : [n];
  if (Array.isArray(o) || Array.isArray(n)) {
    // Every branch a reader relied on must still be there (new branches only widen the type).
    for (const branch of oBranches) {
      const kind = kindOf(branch, ctx.oldNames);
      const match = nBranches.find((b) => kindOf(b, ctx.newNames) === kind);
      if (match === undefined) {
        retyped(ctx, path, oldType, newType);
        return;
      }
      if (kind !== 'null') compareTypes(ctx, path, branch, match);
    }
    return;
  }
  if (typeof o === 'object' && typeof n === 'object' && o.type === 'record' && n.type === 'record') {
    if (o.name.split('.').pop() !== n.name.split('.').pop()) {
      retyped(ctx, path, o, n);
      return;
    }
    const key = `${path}|${o.name}`;
    if (ctx.seen.has(key)) return;
    ctx.seen.add(key);
    compareRecords(ctx, path, o, n);
    return;
  }
  if (typeof o === 'object' && typeof n === 'object' && o.type === 'array' && n.type === 'array') {
    compareTypes(ctx, `${path}[]`, o.items, n.items);
    return;
  }
  if (typeof o === 'object' && typeof n === 'object' && o.type === 'map' && n.type === 'map') {
    compareTypes(ctx, `${path}{}`, o.values, n.values);
    return;
  }
  if (describe(o, ctx.oldNames) !== describe(n, ctx.newNames)) retyped(ctx, path, o, n);
}

function compareRecords(ctx: Ctx, path: string, o: AvroRecordSchema, n: AvroRecordSchema): void {
  const newFields = new Map<string, AvroField>(n.fields.map((f) => [f.name, f]));
  const oldFields = new Set(o.fields.map((f) => f.name));
  for (const field of o.fields) {
    const p = join(path, field.name);
    const match = newFields.get(field.name);
    if (match === undefined)
      ctx.changes.push({ path: p, kind: 'removed', message: `field "${p}" was removed` });
    else compareTypes(ctx, p, field.type, match.type);
  }
  for (const field of n.fields) {
    if (oldFields.has(field.name) || 'default' in field) continue;
    const p = join(path, field.name);
    ctx.changes.push({
      path: p,
      kind: 'added-without-default',
      message: `field "${p}" was added without a default (old records cannot be read with it)`,
    });
  }
}

/**
 * The breaking changes from `registered` (what consumers read today) to `local` (what would be registered);
 * an empty array means consumers keep working.
 */
export function diffSchemas(registered: AvroRecordSchema, local: AvroRecordSchema): SchemaChange[] {
  const oldNames: Names = new Map();
  const newNames: Names = new Map();
  collectNames(registered, undefined, oldNames);
  collectNames(local, undefined, newNames);
  const ctx: Ctx = { oldNames, newNames, changes: [], seen: new Set() };
  compareTypes(ctx, '', registered, local);
  return ctx.changes;
}
