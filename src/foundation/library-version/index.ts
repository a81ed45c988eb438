/**
 * The version check of the project's hooks into third-party internals (avsc's shared buffer, bullmq's private worker
 * parts, `@confluentinc/schemaregistry`'s deep paths; the kafkajs patches check their methods): each hook names the
 * release it was written for, package.json pins that release exactly, a unit test per hook checks both, and the hook
 * calls {@link requireLibraryVersion} before it installs, so a process given another release (an override, a
 * hand-edited lock) refuses to run with one clear line instead of running with the hook silently off.
 */
import { createRequire } from 'node:module';
import { LibraryPatchError } from '../errors/index.js';

const require = createRequire(import.meta.url);

/** The version of `name` this process resolves (its package.json), or undefined when it cannot be read. */
export function installedLibraryVersion(name: string): string | undefined {
  try {
    return (require(`${name}/package.json`) as { version?: unknown }).version?.toString();
  } catch {
    return undefined;
  }
}

/**
 * @param name the package, e.g. `bullmq`
 * @param writtenFor the release the hook was written for (the exact pin in package.json)
 * @param hook what the hook does, for the error line
 * @throws LibraryPatchError `bullmq 6.8.0 is installed, but the worker's lock hook was written for 6.7.0: ...`
 */
export function requireLibraryVersion(
  name: string,
  writtenFor: string,
  hook: string,
  installed: string | undefined = installedLibraryVersion(name),
): void {
  if (installed === writtenFor) return;
  throw new LibraryPatchError(
    `${name} ${installed ?? '(version unreadable)'} is installed, but ${hook} was written for ${writtenFor}: ` +
      `install ${name} ${writtenFor} (package.json pins it), or check the hook against the new release and move the pin`,
    name,
  );
}
