/**
 * The project's one hook into avsc's internals (avsc 5.7.9, pinned exactly while it stands): `Type.__reset(size)`,
 * which replaces the shared buffer every `toBuffer` writes into first. avsc's is 1 kB, and a value that does not fit
 * is written a second time into a fresh buffer of the right size; full user profiles are ~3 kB of Avro, so every one
 * was written twice. A 64 kB shared buffer made user encoding about twice as fast; larger values still work (they
 * take the second write). `avro-types.ts` installs it once, before any type is used (every serializer, deserializer
 * and local type of the project takes its options from there). To drop it: delete this file and its call; encoding
 * stays correct, only slower for values over 1 kB.
 */
import avro from 'avsc';
import { LibraryPatchError } from '../../foundation/errors/index.js';
import { requireLibraryVersion } from '../../foundation/library-version/index.js';

/** The avsc release the hook was written for (package.json pins it exactly; a unit test checks both). */
export const AVSC_HOOKED_VERSION = '5.7.9';

/** The shared buffer's size once installed: a full user profile (~3 kB) and more fit in one write. */
export const AVSC_SHARED_BUFFER_BYTES = 64 * 1024;

/**
 * Sets avsc's shared write buffer to `size` bytes (the pure wrapper of `Type.__reset`; tests reset it to show avsc's
 * own 1 kB behaviour).
 * @throws LibraryPatchError when avsc has no `Type.__reset` (a release other than 5.7.9)
 */
export function resizeAvscSharedBuffer(size: number): void {
  const reset = (avro.Type as unknown as { __reset?: unknown }).__reset;
  if (typeof reset !== 'function')
    throw new LibraryPatchError(
      `avsc has no Type.__reset: the 64 kB shared write buffer cannot be installed (is avsc ${AVSC_HOOKED_VERSION} installed?)`,
      'avsc',
    );
  (reset as (size: number) => void).call(avro.Type, size);
}

let installed = false;

/**
 * Installs the 64 kB shared buffer, once per process (a second call does nothing).
 * @throws LibraryPatchError when the installed avsc is not 5.7.9, or lacks `Type.__reset`
 */
export function installAvscSharedBuffer(): void {
  if (installed) return;
  requireLibraryVersion('avsc', AVSC_HOOKED_VERSION, "the project's avsc shared-buffer hook (Type.__reset)");
  resizeAvscSharedBuffer(AVSC_SHARED_BUFFER_BYTES);
  installed = true;
}
