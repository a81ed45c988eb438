/**
 * How busy the worker and its machine were since the last read, for slot sizing: the larger of Node's event-loop
 * utilization (the share of the time this process's loop spent outside its idle wait, `performance.
 * eventLoopUtilization`: its own CPU binds, or a CPU quota throttles it) and the share of the machine's CPU time that
 * was not idle (`os.cpus()`: the other workers, the brokers and Redis crowd it out). The medium chaos run (three
 * workers, three brokers, Redis, two cores) read 15-76 % on each loop while the box had no idle time at all. More
 * slots would only add to either: the slices' locks would be renewed late and lost (`decideConcurrency`, reason
 * `busy`).
 */
import { cpus } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface CpuBusy {
  /** The larger of the loop's utilization and the machine's busy CPU share since the last read (or the start), 0..1. */
  read: () => number;
  /** The same share as `read`, without starting a new interval. */
  peek: () => number;
}

/** The machine's CPU time so far, ms summed over its cores: idle, and in all. */
export interface CpuTimes {
  idle: number;
  total: number;
}

function machineCpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle;
  }
  return { idle, total };
}

const share = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/** @param cpuTimes the machine's CPU times (tests pass their own) @default from `os.cpus()` */
export function startCpuBusy(cpuTimes: () => CpuTimes = machineCpuTimes): CpuBusy {
  let lastLoop: EventLoopUtilization = performance.eventLoopUtilization();
  let lastCpu = cpuTimes();
  const since = (): { share: number; loop: EventLoopUtilization; cpu: CpuTimes } => {
    const loop = performance.eventLoopUtilization();
    const cpu = cpuTimes();
    const loopShare = performance.eventLoopUtilization(loop, lastLoop).utilization;
    const spent = cpu.total - lastCpu.total;
    const cpuBusy = spent <= 0 ? 0 : 1 - (cpu.idle - lastCpu.idle) / spent;
    return { share: Math.max(share(loopShare), share(cpuBusy)), loop, cpu };
  };
  return {
    read: () => {
      const now = since();
      lastLoop = now.loop;
      lastCpu = now.cpu;
      return now.share;
    },
    peek: () => since().share,
  };
}
