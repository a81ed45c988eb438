/**
 * CLI start-up benchmark: wall time and peak RSS of `gamedata --help` and `gamedata status --help` against
 * `node -e 0`, on the same machine in the same run. The commands run in turn, round after round (so load drifts hit
 * all of them alike); medians per command and each one's ratio to `node -e 0` are printed as a Markdown table.
 * Peak RSS comes from `/usr/bin/time -f %M` when it exists (else it is left out).
 *
 * Run: `npm run bench:startup [-- --runs 15] [--bin bin/gamedata.mjs]` (builds dist/ first)
 * (`--bin` another checkout's bin to compare with; it runs the compiled dist/ by default). Aim: `--help` <= 6x.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeMachine } from './machine.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '15' }, bin: { type: 'string', default: 'bin/gamedata.mjs' } },
});
const runs = Number(values.runs);
if (!Number.isSafeInteger(runs) || runs < 1)
  throw new Error(`--runs must be an integer >= 1, got ${values.runs}`);
const bin = values.bin;
if (bin === 'bin/gamedata.mjs' && !existsSync('dist/app/cli/main.js'))
  throw new Error('dist/ is missing: run `npm run build` first');

const TIME = '/usr/bin/time';
const withRss = existsSync(TIME);

const commands: { label: string; argv: string[] }[] = [
  { label: 'node -e 0', argv: [process.execPath, '-e', '0'] },
  { label: 'gamedata --help', argv: [process.execPath, bin, '--help'] },
  { label: 'gamedata status --help', argv: [process.execPath, bin, 'status', '--help'] },
];

interface Sample {
  ms: number;
  rssKiB: number | undefined;
}

function runOnce(argv: string[]): Sample {
  const full = withRss ? [TIME, '-f', '%M', ...argv] : argv;
  const start = process.hrtime.bigint();
  const r = spawnSync(full[0] as string, full.slice(1), { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  const rss = withRss ? Number(r.stderr.trim().split('\n').at(-1)) : undefined;
  return { ms, rssKiB: rss };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const samples = commands.map(() => [] as Sample[]);
for (const c of commands) runOnce(c.argv); // warm the file cache
for (let i = 0; i < runs; i++) commands.forEach((c, j) => samples[j]?.push(runOnce(c.argv)));

const base = median(samples[0]?.map((s) => s.ms) ?? []);
console.log(`CLI start-up, ${runs} rounds, bin ${bin}; ${describeMachine()}; ${new Date().toISOString()}\n`);
console.log('| command | median wall | vs node -e 0 | median peak RSS |');
console.log('|---|---|---|---|');
commands.forEach((c, j) => {
  const s = samples[j] ?? [];
  const ms = median(s.map((x) => x.ms));
  const rss = withRss ? `${(median(s.map((x) => x.rssKiB ?? 0)) / 1024).toFixed(0)} MiB` : 'n/a';
  console.log(`| \`${c.label}\` | ${ms.toFixed(0)} ms | ${(ms / base).toFixed(1)}x | ${rss} |`);
});
