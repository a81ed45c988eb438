/**
 * One heavy test at a time across the two CI lanes (scripts/test.sh runs `services` and `stacks` in two vitest
 * processes side by side). The chaos test (three private Kafka nodes, Redis restarts, SIGKILLs) and the exactly-once
 * e2e (a private Kafka node, ten SIGKILLs and a broker kill) each take ~135 s alone on this 2-core box, and 420-490 s
 * when they overlap (clean-clone CI, 2026-11-27): each waits for the other's CPU. A lock file taken with `O_EXCL`
 * makes the second wait for the first instead; a lock left by a process that died is taken over.
 */
import { open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK = join(process.env['TMPDIR'] ?? tmpdir(), 'gamedata-heavy-test.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (up to `timeoutMs`) for the heavy-test lock; resolves to its release. */
export async function takeHeavyTestLock(what: string, timeoutMs = 900_000): Promise<() => Promise<void>> {
  const until = Date.now() + timeoutMs;
  let waitedSince: number | undefined;
  for (;;) {
    try {
      const file = await open(LOCK, 'wx');
      await file.writeFile(`${process.pid} ${what}\n`);
      await file.close();
      if (waitedSince !== undefined)
        process.stderr.write(
          `[heavy-test-lock] ${what} waited ${((Date.now() - waitedSince) / 1000).toFixed(0)} s\n`,
        );
      return async () => {
        const held = await readFile(LOCK, 'utf8').catch(() => '');
        if (held.startsWith(`${process.pid} `)) await rm(LOCK, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(LOCK, 'utf8').catch(() => '')).split(' ')[0]);
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      await rm(LOCK, { force: true }); // its holder died without releasing it
      continue;
    }
    if (Date.now() > until)
      throw new Error(`${what}: the heavy-test lock ${LOCK} is still held after ${timeoutMs} ms`);
    waitedSince ??= Date.now();
    await new Promise((r) => setTimeout(r, 1000));
  }
}
