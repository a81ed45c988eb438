/**
 * The record batch checksum kafkajs computes for every produce request: the patch's slicing-by-8 `crc32c`
 * (`src/output/kafka/kafkajs-patches/crc32c.ts`) against kafkajs 2.2.4's bytewise `crc32C`, ns a byte over batches of
 * 64 KiB (a produce request's batch at the worker's linger), 5 rounds each after a warm-up.
 *
 *   npx tsx bench/crc32c.ts [--mib 256]
 */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { crc32c } from '../src/output/kafka/kafkajs-patches/crc32c.js';
import { describeMachine } from './machine.js';

const require = createRequire(import.meta.url);
const kafkajs = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
const at = process.argv.indexOf('--mib');
const mib = at === -1 ? 256 : Number(process.argv[at + 1]);
const batch = randomBytes(64 * 1024);
const rounds = (mib * 1024) / 64;

function round(fn: (b: Buffer) => number): number {
  let x = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) x ^= fn(batch);
  const ns = Number(process.hrtime.bigint() - t0) / (rounds * batch.length);
  if (x === 0.5) throw new Error('unreachable');
  return ns;
}
if (crc32c(batch) !== kafkajs(batch) >>> 0) throw new Error('the two disagree');
console.log(describeMachine());
round(crc32c);
round(kafkajs);
const ours: number[] = [];
const theirs: number[] = [];
for (let r = 0; r < 5; r++) {
  ours.push(round(crc32c));
  theirs.push(round(kafkajs));
}
const line = (name: string, ns: number[]): string =>
  `${name}: ${ns.map((x) => x.toFixed(2)).join(' / ')} ns a byte (min ${Math.min(...ns).toFixed(2)})`;
console.log(line('crc32c, slicing-by-8', ours));
console.log(line('kafkajs crc32C', theirs));
