/** One line describing the machine a benchmark ran on (CPU, cores, memory, Node, load), for docs/benchmarks/diary.md. */
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** CPU seconds (user + system) a process has used so far, from /proc (0 when unreadable). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    // After "pid (comm) ": state is field 3, so utime/stime (fields 14/15) are at indexes 11/12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export function describeMachine(): string {
  const cpu =
    /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ??
    os.cpus()[0]?.model ??
    'unknown';
  return `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${os.loadavg()[0]?.toFixed(1)}`;
}
