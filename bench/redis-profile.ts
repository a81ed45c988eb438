/**
 * Where Redis' time goes over a bench run, by script and command family: `INFO commandstats` lumps every script into
 * one `evalsha` line, so this reads Redis' own slow log with its threshold at 0 (every command, its execution time in
 * µs and its first arguments), drained atomically (`MULTI; SLOWLOG GET -1; SLOWLOG RESET; EXEC`) every 200 ms, and
 * groups the commands by a label: a script by its SHA1 (BullMQ's scripts named from their sources) and the shape of
 * its first key (ids and queue names folded), any other command by its name and the shape of its key; the commands a
 * script ran are labelled apart (their time is in the script's). The slow log
 * measures the command's execution only, not the reads and writes of its round trip; the caller prints Redis' `INFO
 * cpu` beside it for that. The log's own cost (copying up to 32 arguments a command) is in the run's CPU while this
 * runs: compare the shares, not the total, with a run without it.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';

export interface ProfileLine {
  label: string;
  calls: number;
  usec: number;
}

export interface RedisProfile {
  /** Stops the sampling, restores the slow log's settings, and returns the lines by time spent (most first). */
  stop(): Promise<ProfileLine[]>;
}

/** SHA1 -> `bullmq:<script>` for every script of the installed BullMQ (the digest ioredis sends with EVALSHA). */
async function bullmqScriptNames(): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve('bullmq/package.json')), 'dist', 'esm', 'scripts');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js') && f !== 'index.js')) {
    const mod = (await import(join(dir, file))) as Record<string, { name?: string; content?: string }>;
    for (const v of Object.values(mod))
      if (typeof v?.content === 'string' && typeof v.name === 'string')
        names.set(createHash('sha1').update(v.content).digest('hex'), `bullmq:${v.name}`);
  }
  return names;
}

/** A key's shape: hex ids, numbers and a run's tag folded, so that one family's keys give one label. */
export function keyShape(key: string): string {
  return key
    .replace(/[0-9a-f]{24}/g, '<id>')
    .replace(/\b[0-9a-f]{16,}\b/g, '<hex>')
    .replace(/\d+/g, 'N')
    .replace(/bench-[\w-]+/g, '<tag>')
    .slice(0, 80);
}

/** The label of one slow-log entry's arguments. */
export function labelOf(argv: readonly string[], scripts: ReadonlyMap<string, string>): string {
  const cmd = (argv[0] ?? '?').toLowerCase();
  if (cmd === 'evalsha' || cmd === 'eval') {
    const numKeys = Number(argv[2] ?? 0);
    const first = numKeys > 0 ? keyShape(argv[3] ?? '') : '-';
    const script =
      cmd === 'evalsha'
        ? (scripts.get(argv[1] ?? '') ?? `sha ${(argv[1] ?? '').slice(0, 8)}`)
        : `eval "${(argv[1] ?? '').replace(/\s+/g, ' ').slice(0, 40)}"`;
    return `${script} [${first}]`;
  }
  return argv.length > 1 ? `${cmd} ${keyShape(argv[1] ?? '')}` : cmd;
}

/** Starts sampling the Redis at `url` (its slow log's settings are changed until `stop`). */
export async function startRedisProfile(url: string, everyMs = 200): Promise<RedisProfile> {
  const scripts = await bullmqScriptNames();
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  const [, threshold] = (await redis.config('GET', 'slowlog-log-slower-than')) as [string, string];
  const [, maxLen] = (await redis.config('GET', 'slowlog-max-len')) as [string, string];
  await redis.config('SET', 'slowlog-max-len', '1000000');
  await redis.slowlog('RESET');
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  const lines = new Map<string, ProfileLine>();
  const drain = async (): Promise<void> => {
    const res = await redis.multi().slowlog('GET', -1).slowlog('RESET').exec();
    const entries = (res?.[0]?.[1] ?? []) as [number, number, number, string[], string][];
    for (const [, , usec, argv, addr] of entries) {
      // A command a script ran is logged with the scripting client's address: its time is in its script's too.
      const label = `${addr === '?:0' ? '  in a script: ' : ''}${labelOf(argv, scripts)}`;
      const line = lines.get(label) ?? { label, calls: 0, usec: 0 };
      line.calls += 1;
      line.usec += usec;
      lines.set(label, line);
    }
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await drain();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await redis.config('SET', 'slowlog-log-slower-than', threshold);
      await drain();
      await redis.config('SET', 'slowlog-max-len', maxLen);
      redis.disconnect();
      // The drains' own commands are not the run's.
      return [...lines.values()]
        .filter((l) => !/^(slowlog|multi|exec|config)\b/.test(l.label))
        .sort((a, b) => b.usec - a.usec);
    },
  };
}

/** The profile as lines: calls, seconds, µs a record and a call, share of the logged time. */
export function describeProfile(lines: readonly ProfileLine[], records: number, top = 30): string {
  const outer = lines.filter((l) => !l.label.startsWith(' '));
  const total = outer.reduce((s, l) => s + l.usec, 0);
  const rows = lines.slice(0, top).map(
    (l) =>
      `  ${(l.usec / 1e6).toFixed(2).padStart(7)} s ${((100 * l.usec) / Math.max(total, 1)).toFixed(1).padStart(5)} % ${(l.usec / Math.max(records, 1)).toFixed(2).padStart(6)} µs/rec ${String(l.calls).padStart(9)} calls ${(l.usec / Math.max(l.calls, 1)).toFixed(1).padStart(7)} µs/call  ${l.label}`,
  );
  const calls = outer.reduce((s, l) => s + l.calls, 0);
  return [
    `Redis slow log (every command's execution, no round trips; a script's commands counted in it, shown indented): ${(total / 1e6).toFixed(2)} s in ${calls} commands, ${(total / Math.max(records, 1)).toFixed(2)} µs and ${(calls / Math.max(records, 1)).toFixed(2)} commands a record`,
    ...rows,
  ].join('\n');
}
