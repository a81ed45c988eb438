/**
 * What Redis spent over a bench run, read from its own counters (`INFO cpu`, `INFO commandstats`) before and after:
 * its CPU seconds and, per command (scripts by their SHA1 digest, named where the caller knows them), calls and
 * microseconds. Redis counts everything it serves, so run the bench alone on its Redis for a figure of the run.
 */
import { Redis } from 'ioredis';

export interface RedisUsage {
  cpuS: number;
  /** Per command (`evalsha` as one entry: commandstats does not split scripts), calls and µs. */
  commands: Map<string, { calls: number; usec: number }>;
}

function parse(info: string): RedisUsage {
  let cpuS = 0;
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const line of info.split(/\r?\n/)) {
    const cpu = /^used_cpu_(sys|user):([\d.]+)$/.exec(line);
    if (cpu !== null) cpuS += Number(cpu[2]);
    const cmd = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (cmd !== null) commands.set(cmd[1]!, { calls: Number(cmd[2]), usec: Number(cmd[3]) });
  }
  return { cpuS, commands };
}

/** A snapshot of the Redis at `url`'s counters. */
export async function redisUsage(url: string): Promise<RedisUsage> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const [cpu, stats] = await Promise.all([redis.info('cpu'), redis.info('commandstats')]);
    return parse(`${cpu}\n${stats}`);
  } finally {
    redis.disconnect();
  }
}

/** What was spent between two snapshots. */
export function usageBetween(before: RedisUsage, after: RedisUsage): RedisUsage {
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const [name, a] of after.commands) {
    const b = before.commands.get(name) ?? { calls: 0, usec: 0 };
    if (a.calls > b.calls) commands.set(name, { calls: a.calls - b.calls, usec: a.usec - b.usec });
  }
  return { cpuS: after.cpuS - before.cpuS, commands };
}

/** One line: Redis CPU, per record, and the commands that took the most time (µs per record each). */
export function describeUsage(u: RedisUsage, records: number, top = 6): string {
  const perRecord = (usec: number): string => (records > 0 ? (usec / records).toFixed(1) : '-');
  const byTime = [...u.commands.entries()].sort((a, b) => b[1].usec - a[1].usec).slice(0, top);
  const cmds = byTime
    .map(
      ([name, c]) =>
        `${name} ${c.calls} calls ${(c.usec / 1e6).toFixed(1)} s (${perRecord(c.usec)} µs/record)`,
    )
    .join(', ');
  return `Redis CPU ${u.cpuS.toFixed(1)} s (${perRecord(u.cpuS * 1e6)} µs per record of ${records}); commands: ${cmds}`;
}
