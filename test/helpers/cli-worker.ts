/**
 * A `gamedata worker` child process for tests: every stdout and stderr line kept, and a wait for a line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Worker {
  child: ChildProcess;
  /** Every stderr and stdout line so far. */
  lines: string[];
  exited: Promise<{ code: number | null; atMs: number }>;
  startedAt: number;
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
}

export function startWorker(env: NodeJS.ProcessEnv, args: string[]): Worker {
  const startedAt = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/cli/main.ts', 'worker', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  const onData = (b: Buffer): void => {
    const parts = (partial + b.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    for (const w of [...waiters]) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; atMs: number }>((resolve) =>
    child.once('exit', (code) => {
      if (partial !== '') lines.push(partial);
      for (const w of [...waiters]) w();
      resolve({ code, atMs: Date.now() - startedAt });
    }),
  );
  return {
    child,
    lines,
    exited,
    startedAt,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const hit = lines.find((l) => pattern.test(l));
          if (hit !== undefined) {
            done();
            resolve(hit);
          } else if (child.exitCode !== null) {
            done();
            reject(new Error(`worker exited (${child.exitCode}) before ${pattern}:\n${lines.join('\n')}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${lines.join('\n')}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
