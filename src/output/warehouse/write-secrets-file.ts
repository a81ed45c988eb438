/**
 * Writes the connectors' secrets file (issue 48, item 9): a temporary file beside the target, created exclusively
 * (`O_EXCL`: never an existing file or a symlink planted at its name) with mode 0600 from its first byte, flushed, then
 * renamed over the target. The rename replaces a symlink at the target rather than writing through it, and no reader
 * ever sees the secrets in a file with a wider mode or half written.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Writes `text` to `path` as described above. @throws the file system's error (the temporary file removed). */
export function writeSecretsFile(path: string, text: string): void {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // already renamed or never written
    }
    throw error;
  }
}
