/** One line describing the machine a benchmark ran on (CPU, cores, memory, Node, load), for docs/benchmarks/diary.md. */
import { readFileSync } from 'node:fs';
import os from 'node:os';

export function describeMachine(): string {
  const cpu =
    /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ??
    os.cpus()[0]?.model ??
    'unknown';
  return `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${os.loadavg()[0]?.toFixed(1)}`;
}
