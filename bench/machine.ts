/** One line describing the machine a benchmark ran on (CPU, cores, memory, Node, load), for docs/benchmarks/diary.md. */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** The fields of /proc/<pid>/stat after "pid (comm) " (state first, at index 0), or undefined when unreadable. */
function statFields(pid: number | string): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (0 when unreadable). */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  // State is field 3, so utime/stime (fields 14/15) are at indexes 11/12.
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) / 100;
}

export function describeMachine(): string {
  const cpu =
    /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ??
    os.cpus()[0]?.model ??
    'unknown';
  return `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${os.loadavg()[0]?.toFixed(1)}`;
}

/** `pid` and every process below it (children, their children: a `gamedata worker --processes N` supervisor's forks), from /proc. */
export function processTree(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = statFields(entry)?.[1]; // undefined: gone meanwhile
    if (ppid !== undefined) parentOf.set(Number(entry), Number(ppid));
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++)
    for (const [child, parent] of parentOf) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** CPU seconds of `pid` and the processes below it that are alive now (a child that exited is not counted). */
export function treeCpuSeconds(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuSeconds(p), 0);
}

/** A process's resident memory in bytes (VmRSS, /proc; 0 when unreadable). */
export function rssBytes(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** The pid of the first process whose command line contains `needle` (e.g. `kafka.Kafka`), else undefined. */
export function findProcess(needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
