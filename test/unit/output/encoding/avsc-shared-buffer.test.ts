// avsc's Type.__reset (src/output/encoding/avsc-shared-buffer.ts): the one hook into avsc's internals. A private
// hook may change in any release, so avsc is pinned exactly and this fails loudly when what is installed is not what
// the hook was written for; then it shows what the hook is for: a value over 1 kB written twice, then once.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import avro from 'avsc';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AVSC_HOOKED_VERSION,
  AVSC_SHARED_BUFFER_BYTES,
  installAvscSharedBuffer,
  resizeAvscSharedBuffer,
} from '../../../../src/output/encoding/avsc-shared-buffer.js';
import { LibraryPatchError } from '../../../../src/foundation/errors/index.js';
import { requireLibraryVersion } from '../../../../src/foundation/library-version/index.js';

/** Counts its writes: avsc writes a value again, into a fresh buffer, when the shared one overflows. */
class CountingString extends avro.types.LogicalType {
  static writes = 0;
  protected override _toValue(value: unknown): unknown {
    CountingString.writes++;
    return value;
  }
  protected override _fromValue(value: unknown): unknown {
    return value;
  }
}

const profileType = avro.Type.forSchema(
  {
    type: 'record',
    name: 'Profile',
    fields: [{ name: 'bio', type: { type: 'string', logicalType: 'counting' } }],
  },
  { logicalTypes: { counting: CountingString } },
);

/** How many times one toBuffer writes `value`. */
function writesOf(value: { bio: string }): number {
  CountingString.writes = 0;
  profileType.toBuffer(value);
  return CountingString.writes;
}

describe("avsc's shared write buffer (Type.__reset)", () => {
  afterAll(() => resizeAvscSharedBuffer(AVSC_SHARED_BUFFER_BYTES));

  it('avsc is pinned exactly to the release the hook was written for, and that release is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['avsc']).toBe(AVSC_HOOKED_VERSION);
    const installed = createRequire(import.meta.url)('avsc/package.json') as { version: string };
    expect(installed.version).toBe(AVSC_HOOKED_VERSION);
  });

  it("avsc's own 1 kB buffer writes a 3 kB value twice; after the install, once", () => {
    const profile = { bio: 'x'.repeat(3_000) };
    resizeAvscSharedBuffer(1024); // avsc's default: the bug first
    expect(writesOf(profile)).toBe(2);
    installAvscSharedBuffer(); // this file does not import avro-types.ts: the first install of this process
    expect(writesOf(profile)).toBe(1);
    resizeAvscSharedBuffer(1024);
    installAvscSharedBuffer(); // once per process: a second install changes nothing
    expect(writesOf(profile)).toBe(2);
    resizeAvscSharedBuffer(AVSC_SHARED_BUFFER_BYTES);
    // the bytes are the same either way, and a value over the shared buffer still encodes (the second write)
    const big = { bio: 'y'.repeat(AVSC_SHARED_BUFFER_BYTES + 10) };
    expect(writesOf(big)).toBe(2);
    expect(profileType.fromBuffer(profileType.toBuffer(big))).toEqual(big);
  });

  it('a release other than the pinned one refuses with one LibraryPatchError naming both versions', () => {
    expect(() => requireLibraryVersion('avsc', AVSC_HOOKED_VERSION, 'the hook', '5.8.0')).toThrow(
      LibraryPatchError,
    );
    expect(() => requireLibraryVersion('avsc', AVSC_HOOKED_VERSION, 'the hook', '5.8.0')).toThrow(
      /avsc 5\.8\.0 is installed, but the hook was written for 5\.7\.9/,
    );
    expect(() => requireLibraryVersion('avsc', AVSC_HOOKED_VERSION, 'the hook')).not.toThrow();
  });
});
