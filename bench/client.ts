/**
 * Client benchmark: `transaction.collectAll` over the last 24 h, 48 h and 72 h of the simulator, at each scale asked,
 * reporting rounds (sequential waves of POSTs: a POST sent while none is in flight starts a new wave), requests,
 * procedures and seconds, and checking every result against the simulator's truth (exact or the run fails).
 *
 *   npm run bench:client -- --latency realistic                  # scales small and medium, seed 7
 *   npm run bench:client -- --latency realistic --scale small --hours 48 --runs 3
 *
 * The client is used as a new user would: `collectAll({ oldestDate })` with its defaults (no injected clock; the
 * simulator's clock is not the machine's). Rounds are counted from the POSTs themselves, so the same bench measures
 * a client without round planning too. With `--latency realistic` time is the upstream's (sleeps), not CPU.
 *
 * `--pipeline`: the pipeline's read path instead, under both plans in the same session (`--plans requests,rounds`):
 * `planBackfill` through the worker's planner source, then every slice through `processSlice` (the worker's own
 * code: page -> dedup -> publish -> checkpoint, splits and user discovery included) on one client with the worker's
 * client settings, `--slice-concurrency` slices at once (the worker's `--concurrency`; default 32 as the CLI's) and
 * spawned slices queued behind. Dedup, publishing and checkpoints are in memory (no Kafka, no BullMQ), so the
 * figures are the upstream's: rounds, requests, seconds. Two runs: the transaction feed over the last `--hours`
 * (default 48) and the full-history per-user walk; every published id set is compared with the simulator's truth.
 *
 *   npm run bench:client -- --latency realistic --pipeline --scale small [--slice-concurrency 64] [--walks feed,full]
 *     [--plans requests,rounds] [--probe-rounds 3]
 */
import {
  collectSlices,
  createClient,
  createListing,
  type CollectStats,
} from '../src/upstream/client/index.js';
import { createDedupStore, createMemorySeenSet, type DedupRecord } from '../src/pipeline/dedup/index.js';
import {
  createClientPlannerSource,
  createClientSliceSource,
  PIPELINE_CLIENT_DEFAULTS,
} from '../src/app/index.js';
import { processSlice, withUserDiscovery, type UserDirectory } from '../src/pipeline/slice/index.js';
import { planBackfill, type SliceJobData } from '../src/pipeline/planner/index.js';
import type { PagePublisher } from '../src/pipeline/publish/index.js';
import { parseLatencySpec, startSimulator, type Scale } from '../tools/simulator/index.js';
import { describeMachine } from './machine.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const scales = (flag('scale') ?? 'small,medium').split(',') as Scale[];
const hoursList = (flag('hours') ?? '24,48,72').split(',').map(Number);
const runs = Number(flag('runs') ?? 1);
const seed = Number(flag('seed') ?? 7);
const latency = flag('latency');
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Waves of POSTs counted at the socket (a POST sent while none is in flight starts one). */
function countingFetch(): { fetch: typeof fetch; waves: () => number } {
  let inFlight = 0;
  let waves = 0;
  return {
    waves: () => waves,
    fetch: async (input, init) => {
      if (inFlight++ === 0) waves++;
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    },
  };
}

/** An in-memory run directory (the Redis one's behaviour): listed users seeded, discovered ones remembered. */
function memoryUsers(): UserDirectory {
  const known = new Set<string>();
  let discovered = 0;
  return {
    seed: (_run, ids) => {
      for (const id of ids) known.add(id);
      return Promise.resolve();
    },
    add: (_run, ids) => {
      for (const id of ids) known.add(id);
      return Promise.resolve();
    },
    unknown: (_run, ids) => Promise.resolve(ids.filter((id) => !known.has(id))),
    remember: (_run, ids) => {
      const fresh = ids.filter((id) => !known.has(id));
      for (const id of fresh) known.add(id);
      discovered += fresh.length;
      return Promise.resolve(fresh.length);
    },
    stats: () => Promise.resolve({ unlistedUsers: 0, discoveredUsers: discovered }),
  };
}

/** The pipeline's read path: plan, then every slice through processSlice, `sliceConcurrency` at once. */
async function pipelineRun(
  url: string,
  until: number,
  request: { since?: number; fullHistory: boolean },
  plan: 'requests' | 'rounds',
  sliceConcurrency: number,
  key: string,
): Promise<{ ids: Set<string>; published: number; line: string }> {
  const counting = countingFetch();
  const client = createClient({
    baseUrl: url,
    apiKey: key,
    ...PIPELINE_CLIENT_DEFAULTS,
    fetch: counting.fetch,
    cache: false,
  });
  const started = performance.now();
  const planned = await planBackfill(
    {
      resources: ['transactions'],
      until,
      fullHistory: request.fullHistory,
      runId: key,
      ...(request.since === undefined ? {} : { since: request.since }),
    },
    createClientPlannerSource(client),
    { plan, ...(flag('probe-rounds') === undefined ? {} : { maxProbeRounds: Number(flag('probe-rounds')) }) },
  );
  const planSecs = (performance.now() - started) / 1000;
  const planWaves = counting.waves();
  const planRequests = client.stats().httpRequests;
  const users = memoryUsers();
  if (planned.users) await users.seed(key, planned.users.ids, planned.users.unlisted);
  const ids = new Set<string>();
  let published = 0;
  const publisher: PagePublisher = {
    publishPage: ({ records }) => {
      for (const r of records) ids.add(String((r as DedupRecord)._id));
      published += records.length;
      return Promise.resolve({ published: records.length, deadLettered: 0, deadLetters: [] });
    },
  };
  const dedup = createDedupStore(createMemorySeenSet());
  const base = createClientSliceSource(client);
  const queue: SliceJobData[] = [];
  const known = new Set<string>();
  const enqueue = (s: SliceJobData): void => {
    if (known.has(s.sliceId)) return; // deterministic job ids: adding again is a no-op
    known.add(s.sliceId);
    queue.push(s);
  };
  planned.slices.forEach(enqueue);
  let jobs = 0;
  let running = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      if (queue.length === 0 && running === 0) resolve();
      while (running < sliceConcurrency && queue.length > 0) {
        const data = queue.shift() as SliceJobData;
        running++;
        jobs++;
        const handle = {
          data,
          checkpoint: () => Promise.resolve(),
          spawn: (children: SliceJobData[]) => {
            children.forEach(enqueue);
            return Promise.resolve();
          },
        };
        const source = request.fullHistory
          ? withUserDiscovery(base, planned.run, { users, spawn: handle.spawn })
          : base;
        processSlice(handle, { source, dedup, publisher, counters: { add: () => Promise.resolve() } })
          .then(() => {
            running--;
            pump();
          })
          .catch(reject);
      }
    };
    pump();
  });
  const secs = (performance.now() - started) / 1000;
  const st = client.stats();
  // A revision before round planning returns no `planning` (the bench runs against it too, for "before").
  const p = (planned as Partial<typeof planned>).planning ?? {
    probeRounds: NaN,
    probePages: NaN,
    emptyWalks: 0,
  };
  return {
    ids,
    published,
    line:
      `${counting.waves()} | ${st.httpRequests} | ${st.procedures} | ${secs.toFixed(1)} | ` +
      `plan: ${planWaves} rounds, ${planRequests} requests, ${planSecs.toFixed(1)} s (probe rounds ${p.probeRounds}, probe pages ${p.probePages}) | ` +
      `${planned.slices.length} slices planned, ${jobs} run${p.emptyWalks > 0 ? `, ${p.emptyWalks} walks without a timed row` : ''}`,
  };
}

async function pipelineMain(): Promise<void> {
  const plans = (flag('plans') ?? 'requests,rounds').split(',') as ('requests' | 'rounds')[];
  const sliceConcurrency = Number(flag('slice-concurrency') ?? 32);
  const hours = Number(flag('hours') ?? 48);
  console.log(
    `machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}; seed ${seed}; latency ${latency ?? 'off'}; ` +
      `slice concurrency ${sliceConcurrency}; client ${JSON.stringify(PIPELINE_CLIENT_DEFAULTS)}`,
  );
  console.log(
    'scale | walk | plan | rows | rounds | requests | procedures | seconds | planning | slices | exact',
  );
  for (const scale of scales) {
    const sim = await startSimulator({ seed, scale });
    if (latency !== undefined) sim.configure({ latency: parseLatencySpec(latency) });
    const until = sim.now();
    const all = sim.truth('transactions').filter((r) => Date.parse(String(r['createdAt'])) < until);
    const walks = [
      { name: `feed ${hours} h`, since: until - hours * 3_600_000, fullHistory: false },
      { name: 'full history', since: undefined, fullHistory: true },
    ].filter((w) => (flag('walks') ?? 'feed,full').includes(w.fullHistory ? 'full' : 'feed'));
    for (const walk of walks) {
      const truth = new Set(
        all
          .filter((r) => walk.since === undefined || Date.parse(String(r['createdAt'])) >= walk.since)
          .map((r) => String(r['_id'])),
      );
      for (const plan of plans) {
        for (let run = 0; run < runs; run++) {
          const r = await pipelineRun(
            sim.url,
            until,
            { ...(walk.since === undefined ? {} : { since: walk.since }), fullHistory: walk.fullHistory },
            plan,
            sliceConcurrency,
            `bench-pipe-${scale}-${walk.fullHistory ? 'full' : hours}-${plan}-${run}`,
          );
          const missing = [...truth].filter((id) => !r.ids.has(id)).length;
          const extra = [...r.ids].filter((id) => !truth.has(id)).length;
          const exact = missing === 0 && extra === 0 && r.published === truth.size;
          console.log(
            `${scale} | ${walk.name} | ${plan} | ${fmt(r.ids.size)} | ${r.line} | ${exact ? 'yes' : `NO (missing ${missing}, extra ${extra}, published ${r.published})`}`,
          );
          if (!exact) process.exitCode = 1;
        }
      }
    }
    await sim.close();
  }
}

async function main(): Promise<void> {
  if (args.includes('--pipeline')) return pipelineMain();
  console.log(
    `machine: ${describeMachine()}; date ${new Date().toISOString().slice(0, 10)}; seed ${seed}; latency ${latency ?? 'off'}`,
  );
  console.log('scale  | window | rows | rounds | requests | procedures | seconds | exact');
  for (const scale of scales) {
    const t0 = performance.now();
    const sim = await startSimulator({ seed, scale });
    if (latency !== undefined) sim.configure({ latency: parseLatencySpec(latency) });
    console.error(`simulator ${scale} ready in ${fmt(performance.now() - t0)} ms`);
    const truthAll = sim.truth('transactions');
    for (const hours of hoursList) {
      const oldest = sim.now() - hours * 3_600_000;
      const truth = truthAll.filter((r) => Date.parse(String(r['createdAt'])) >= oldest);
      for (let run = 0; run < runs; run++) {
        // Waves of POSTs, counted at the socket: the same measure for any client version.
        let inFlight = 0;
        let waves = 0;
        const countingFetch: typeof fetch = async (input, init) => {
          if (inFlight++ === 0) waves++;
          try {
            return await fetch(input, init);
          } finally {
            inFlight--;
          }
        };
        const client = createClient({
          baseUrl: sim.url,
          apiKey: `bench-${scale}-${hours}-${run}`,
          fetch: countingFetch,
          cache: false,
        });
        const stats: CollectStats = { slices: 0, splits: 0, pages: 0 };
        const started = performance.now();
        const got = await collectSlices<Record<string, unknown>>(
          client,
          [createListing('transactions')],
          { oldestDate: oldest },
          stats,
        );
        const secs = (performance.now() - started) / 1000;
        const exact = got.length === truth.length && got.every((r, i) => r['_id'] === truth[i]?.['_id']);
        const st = client.stats();
        console.log(
          `${scale.padEnd(6)} | ${String(hours).padStart(4)} h | ${fmt(got.length)} | ${waves} | ${st.httpRequests} | ${st.procedures} | ${secs.toFixed(1)} | ${exact ? 'yes' : 'NO'}` +
            ` (slices ${stats.slices}, splits ${stats.splits}, page rounds ${stats.rounds ?? 'n/a'})`,
        );
        if (!exact) process.exitCode = 1;
      }
    }
    await sim.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
