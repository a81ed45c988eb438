/**
 * Issue 23, "a full history that reads each transaction once": how many transaction pages a full history costs when
 * it walks per user (today: every trade under its buyer and its seller) against walks partitioned by one full-history
 * filter (`countryId`, `itemCode`, `muId` or `partyId`), on the simulator, with no pipeline around it. For each
 * partition it checks what the proof of the plan (docs/ARCHITECTURE.md, "Upstream budget") would check on the whole
 * history: rows read once, twice, or by no walk, per transaction type.
 *
 *   npx tsx bench/budget-partition.ts [--scale small] [--seed 7] [--keys userId,countryId,itemCode,muId,partyId]
 *
 * Pages are counted as the page reads a walk makes (pages of 100, a walk ends on its first partial page). The walks
 * are not time-sliced here: a sliced walk adds about one partial page per slice.
 *
 * `--plan countryId|off[,..]` measures the PLANNER instead (issue 23, built): `planBackfill` of full-history
 * transactions with `partition` set (the proof on the window, the partition and per-user walks, their slices), through
 * the pipeline's client and planner source, then every planned slice read as a worker reads it (readSlice, pages of
 * 100, 32 at a time); transaction page reads counted by the simulator (proof, probes and slices), and every row of the
 * truth checked read (duplicates counted). `--without-country wage=0.1,...`: the simulator leaves that share of a
 * type's rows without `countryId` (`transactionsWithoutCountry`). Runtime splits of a slice are not modelled (none is
 * above the workers' split threshold of 10,000 rows at scale small or medium).
 */
import pLimit from 'p-limit';
import { createClient } from '../src/upstream/client/index.js';
import { createClientPlannerSource, PIPELINE_CLIENT_DEFAULTS } from '../src/app/pipeline-runtime.js';
import { planBackfill } from '../src/pipeline/planner/index.js';
import { createListing } from '../src/upstream/client/listing.js';
import { readSlice } from '../src/upstream/client/read-slice.js';
import { startSimulator } from '../tools/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const scale = flag('scale', 'small') as 'small' | 'medium';
const seed = Number(flag('seed', '7'));
const keys = flag('keys', 'userId,countryId,itemCode,muId,partyId').split(',');
const plans = flag('plan', '')
  .split(',')
  .filter((p) => p !== '') as ('countryId' | 'off')[];
const withoutCountry = Object.fromEntries(
  flag('without-country', '')
    .split(',')
    .filter((p) => p !== '')
    .map((p) => {
      const [type, share] = p.split('=');
      return [type as string, Number(share)];
    }),
);

interface Row {
  _id: string;
  transactionType?: string;
  [k: string]: unknown;
}

async function main(): Promise<void> {
  console.log(
    `machine: ${describeMachine()}; date ${new Date().toISOString()}; scale ${scale}, seed ${seed}`,
  );
  const sim = await startSimulator({
    port: 0,
    scale,
    seed,
    rateLimit: { enabled: false },
    transactionsWithoutCountry: withoutCountry,
  });
  try {
    if (plans.length > 0) {
      const rows = sim.truth('transactions').length;
      console.log(
        `rows ${rows}, ceil(rows/100) = ${Math.ceil(rows / 100)}; without countryId: ${JSON.stringify(withoutCountry)}`,
      );
      console.log(
        '| partition | proof found | slices | proof pages | other planning pages | slice pages | transaction page reads | / ceil(rows/100) | every row read | rows read 2+ | planning / all |',
      );
      console.log('|---|---|---|---|---|---|---|---|---|---|---|');
      for (const partition of plans) await measurePlan(sim, partition);
      return;
    }
    const client = createClient({ baseUrl: sim.url, apiKey: 'bench', cache: false });
    const truth = sim.truth('transactions') as unknown as Row[];
    const typeOf = new Map(truth.map((r) => [r._id, r.transactionType ?? '?']));
    const minPages = Math.ceil(truth.length / 100);

    async function walk(filters: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
      const ids: string[] = [];
      let pages = 0;
      for await (const page of readSlice<Row>(
        client,
        createListing('transactions', filters),
        { start: 0, end: Infinity },
        { limit: 100, onInvalidItem: 'pass' },
      )) {
        pages++;
        for (const item of page.items) ids.push(item._id);
      }
      return { ids, pages };
    }

    async function measure(key: string, values: string[], concurrency = 16): Promise<void> {
      const seen = new Map<string, number>();
      let pages = 0;
      const queue = [...values];
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let v = queue.shift(); v !== undefined; v = queue.shift()) {
            const r = await walk({ [key]: v });
            pages += r.pages;
            for (const id of r.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
          }
        }),
      );
      const once = [...seen.values()].filter((n) => n === 1).length;
      const more = [...seen.values()].filter((n) => n > 1).length;
      const missedByType = new Map<string, number>();
      for (const r of truth)
        if (!seen.has(r._id))
          missedByType.set(r.transactionType ?? '?', (missedByType.get(r.transactionType ?? '?') ?? 0) + 1);
      const foreign = [...seen.keys()].filter((id) => !typeOf.has(id)).length;
      console.log(
        `| ${key} | ${values.length} | ${pages} | ${(pages / minPages).toFixed(2)}x | ${once} | ${more} | ${truth.length - seen.size + foreign} | ${foreign} | ${[...missedByType].map(([t, n]) => `${t} ${n}`).join(', ') || 'none'} |`,
      );
    }

    const distinct = (field: string): string[] =>
      [...new Set(truth.map((r) => r[field]).filter((v): v is string => typeof v === 'string'))].sort();
    const users = (sim.truth('users') as unknown as Row[]).map((u) => u._id);
    console.log(`rows ${truth.length}, ceil(rows/100) = ${minPages}`);
    console.log(
      '| walk per | walks | page reads | / ceil(rows/100) | rows read once | rows read 2+ | rows missed | foreign | missed by type |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    // The key values a planner could know without reading the rows: the countries and the catalogue's item codes are
    // listed by the upstream; here the values present in the truth stand in for them.
    for (const key of keys) await measure(key, key === 'userId' ? users : distinct(key));
  } finally {
    await sim.close();
  }
}

const TX = 'transaction.getPaginatedTransactions';

/** Plans full-history transactions with `partition` and reads every planned slice; prints one Markdown row. */
async function measurePlan(
  sim: Awaited<ReturnType<typeof startSimulator>>,
  partition: 'countryId' | 'off',
): Promise<void> {
  const truth = sim.truth('transactions') as unknown as Row[];
  const minPages = Math.ceil(truth.length / 100);
  const client = createClient({
    baseUrl: sim.url,
    apiKey: 'bench',
    cache: false,
    ...PIPELINE_CLIENT_DEFAULTS,
  });
  sim.resetStats();
  const t0 = Date.now();
  const planned = await planBackfill(
    { resources: ['transactions'], fullHistory: true, until: sim.now(), runId: 'bench' },
    createClientPlannerSource(client),
    { partition },
  );
  const planMs = Date.now() - t0;
  const planningPages = sim.stats().procedureCalls.byProcedure[TX] ?? 0;
  const reads = new Map<string, number>();
  const limit = pLimit(32);
  await Promise.all(
    planned.slices.map((s) =>
      limit(async () => {
        for await (const page of readSlice<Row>(
          client,
          createListing(s.resource, s.filters),
          { start: s.start, end: s.end },
          { onInvalidItem: 'pass' },
        ))
          for (const item of page.items) reads.set(item._id, (reads.get(item._id) ?? 0) + 1);
      }),
    ),
  );
  const secs = (Date.now() - t0) / 1000;
  const pages = sim.stats().procedureCalls.byProcedure[TX] ?? 0;
  const missing = truth.filter((r) => !reads.has(r._id)).length;
  const twice = [...reads.values()].filter((n) => n > 1).length;
  const p = planned.run.partition;
  const partitionSlices = planned.slices.filter((s) => s.filters['userId'] === undefined).length;
  console.log(
    `| ${partition} | ${p === undefined ? '-' : `${p.provenTypes.length} proven / ${p.unprovenTypes.join(' ') || 'none'} per user; ${p.rows.covered} covered, ${p.rows.uncovered} uncovered, ${p.rows.repeated} repeated, ${p.rows.foreign} foreign`} | ` +
      `${partitionSlices} + ${planned.slices.length - partitionSlices} per user | ${planned.planning.proofPages ?? 0} | ${planningPages - (planned.planning.proofPages ?? 0)} | ${pages - planningPages} | **${pages}** | **${(pages / minPages).toFixed(2)}x** | ` +
      `${missing === 0 ? 'yes' : `no: ${missing} missing`} | ${twice} | ${(planMs / 1000).toFixed(1)} s / ${secs.toFixed(1)} s |`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
