/**
 * The last step of a command that closed everything it opened: the process should now end by itself. If a library
 * left a timer or a socket open (a retry timer of a fenced producer, a socket nobody closed), it would sit there,
 * done, for minutes. After `ms` this names what is still open, in one line (so the cause can be found), and exits.
 * The timer is unref'd: a process with nothing open exits at once and never sees it.
 */
import { formatDuration } from '../../foundation/config/index.js';

interface LingerHooks {
  readonly log: (line: string) => void;
  readonly exit: (code: number) => void;
}

const PROCESS_HOOKS: LingerHooks = {
  log: (line) => console.error(line),
  exit: (code) => process.exit(code),
};

export function exitIfStillRunning(
  ms: number,
  who: string,
  hooks: LingerHooks = PROCESS_HOOKS,
): NodeJS.Timeout {
  const timer = setTimeout(() => {
    const open = countNames(process.getActiveResourcesInfo());
    hooks.log(`${who}: closed, but still running after ${formatDuration(ms)} (open: ${open}): exiting`);
    hooks.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  }, ms);
  timer.unref();
  return timer;
}

/** ['TCPWRAP', 'Timeout', 'Timeout'] -> "TCPWRAP x1, Timeout x2" ("nothing" when empty). */
export function countNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => `${n} x${c}`).join(', ') || 'nothing';
}
