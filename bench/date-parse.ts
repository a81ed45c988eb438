/**
 * The wire date-time parse every date field of every record goes through twice (check and encode):
 * `parseDateTime` (the canonical `YYYY-MM-DDTHH:mm:ss.sssZ` read by hand, anything else by `Date.parse`) against
 * `Date.parse` alone, ns a call over the simulator's kind of dates (a year of milliseconds), 5 rounds each, after a
 * warm-up round.
 *
 *   npx tsx bench/date-parse.ts [--dates 1000000]
 */
import { parseDateTime } from '../src/foundation/models/index.js';
import { describeMachine } from './machine.js';

const at = process.argv.indexOf('--dates');
const n = at === -1 ? 1_000_000 : Number(process.argv[at + 1]);
const start = Date.UTC(2025, 0, 1);
const dates = Array.from({ length: n }, (_, i) => new Date(start + ((i * 7_919_933) % 31_536_000_000)).toISOString());

function round(parse: (s: string) => number | undefined): number {
  let sum = 0;
  const t0 = process.hrtime.bigint();
  for (const d of dates) sum += parse(d) ?? 0;
  const ns = Number(process.hrtime.bigint() - t0) / n;
  if (sum === 0) throw new Error('nothing parsed');
  return ns;
}

const dateParse = (s: string): number | undefined => {
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
};
console.log(describeMachine());
round(parseDateTime);
round(dateParse);
const rows: [string, number[]][] = [
  ['parseDateTime', []],
  ['Date.parse', []],
];
for (let r = 0; r < 5; r++) {
  rows[0]![1].push(round(parseDateTime));
  rows[1]![1].push(round(dateParse));
}
for (const [name, ns] of rows)
  console.log(`${name}: ${ns.map((x) => x.toFixed(0)).join(' / ')} ns a call (min ${Math.min(...ns).toFixed(0)})`);
