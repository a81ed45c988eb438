// src/output/encoding/schema-registry-library.ts: the one door to @confluentinc/schemaregistry, by deep path into its
// dist/ (its index loads every KMS SDK). Deep paths are internals that may move in any release, so the library is
// pinned exactly, and this fails loudly when what is installed is not what the door was written for; then it shows
// the door gives the library's own classes, and what it is for: the deep paths load no KMS SDK, the index does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as root from '@confluentinc/schemaregistry';
import { describe, expect, it } from 'vitest';
import * as door from '../../../../src/output/encoding/schema-registry-library.js';
import { LibraryPatchError } from '../../../../src/foundation/errors/index.js';
import { requireLibraryVersion } from '../../../../src/foundation/library-version/index.js';
import { createRegistryClient } from '../../../../src/output/encoding/registry-client.js';

const LIBRARY = '@confluentinc/schemaregistry';

/** The modules a fresh Node loads for `requires`, counted: all, and those of a KMS SDK. */
function loadedBy(requires: string[]): { modules: number; kms: number } {
  const script = `${requires.map((r) => `require(${JSON.stringify(r)});`).join('')}
const k = Object.keys(require.cache);
console.log(JSON.stringify({ modules: k.length, kms: k.filter((x) => /@aws-sdk|@azure|google-auth|@google-cloud|node-vault/.test(x)).length }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as {
    modules: number;
    kms: number;
  };
}

describe('the schema-registry library door (deep imports into dist/)', () => {
  it('the library is pinned exactly to the release the door was written for, and that release is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies[LIBRARY]).toBe(door.SCHEMA_REGISTRY_LIBRARY_VERSION);
    const installed = createRequire(import.meta.url)(`${LIBRARY}/package.json`) as { version: string };
    expect(installed.version).toBe(door.SCHEMA_REGISTRY_LIBRARY_VERSION);
    expect(() => door.requireSchemaRegistryLibrary()).not.toThrow();
  });

  it("each deep export is the library's own (the very class or enum its index exports)", () => {
    expect(door.AvroSerializer).toBe(root.AvroSerializer);
    expect(door.AvroDeserializer).toBe(root.AvroDeserializer);
    expect(door.SerdeType).toBe(root.SerdeType);
    expect(door.SubjectNameStrategyType).toBe(root.SubjectNameStrategyType);
    expect(door.RestError).toBe(root.RestError);
    expect(door.SchemaRegistryClient).toBe(root.SchemaRegistryClient);
    expect(door.Compatibility).toBe(root.Compatibility);
  });

  it('the deep paths load no KMS SDK; the index loads them (what the door saves at start-up)', () => {
    const dist = (p: string): string => `${LIBRARY}/dist/${p}`;
    const deep = loadedBy(
      [
        'serde/avro.js',
        'serde/serde.js',
        'serde/rule-registry.js',
        'rest-error.js',
        'schemaregistry-client.js',
      ].map(dist),
    );
    const index = loadedBy([LIBRARY]);
    expect(deep.kms).toBe(0);
    expect(index.kms).toBeGreaterThan(0);
    expect(deep.modules).toBeLessThan(index.modules / 2);
  });

  it('another release refuses with one LibraryPatchError naming the library and both versions', () => {
    const refused = (): void =>
      requireLibraryVersion(LIBRARY, door.SCHEMA_REGISTRY_LIBRARY_VERSION, 'the deep imports', '1.11.0');
    expect(refused).toThrow(LibraryPatchError);
    expect(refused).toThrow(
      /@confluentinc\/schemaregistry 1\.11\.0 is installed, but the deep imports was written for 1\.10\.1/,
    );
    // createRegistryClient runs the check first: with the pinned release it builds a client
    expect(createRegistryClient({ url: 'http://127.0.0.1:1' })).toBeDefined();
  });
});
