/**
 * Wires the real parts into the pipeline's small interfaces: ONE batching client per process (so the pages of
 * every slice share POSTs) on the API key's shared budget (src/upstream/budget: every process of the deployment packs its
 * calls into the same full POSTs, one pace and one 429 pause per key), the registry-backed encoder, the kafkajs
 * sink, Redis for dedup/counters/BullMQ/the budget.
 * Closing order: callers close the workers first, then this (Kafka producer, the budget, then Redis).
 */
import type { Redis } from 'ioredis';
import {
  connectRedis,
  leaseProducerMember,
  createRedisSliceOwners,
  createRunCounters,
  type RunCounters,
  createRangeGaps,
  getRunStatus,
  type RangeGaps,
} from '../pipeline/queue/index.js';
import {
  createSharedBudget,
  createWorkEstimator,
  type SharedBudget,
  type SharedBudgetOptions,
} from '../upstream/budget/index.js';
import { createQueuedSlices } from '../pipeline/planner/index.js';
import { ConfigError } from '../foundation/errors/index.js';
import type { PipelineSettings } from '../foundation/config/index.js';
import {
  createClient,
  type Client,
  type ClientOptions,
  createListing,
  type Listing,
  collectSlices,
  probeSortTimes,
  readSlice,
  LISTING_SPECS,
} from '../upstream/client/index.js';
import {
  USER_WALK_GEOMETRIC_ABOVE,
  createRedisUserDirectory,
  type UserDirectory,
} from '../pipeline/slice/index.js';
import {
  createDedupStore,
  createRedisSeenSet,
  type DedupRecord,
  type DedupStore,
  createPendingMarks,
  createRedisPendingMarks,
  createRunRegistry,
  type RunRegistry,
} from '../pipeline/dedup/index.js';
import { createRecordEncoder, createRegistryClient } from '../output/encoding/index.js';
import type { PlannerSource } from '../pipeline/planner/index.js';
import {
  createKafkaSink,
  type KafkaSink,
  checkpointTopicName,
  createTransactionalSlicePublisher,
} from '../output/kafka/index.js';
import {
  createCoalescingSink,
  createPagePublisher,
  type PagePublisher,
  createPageEncoder,
  wrapNotARecords,
  createSchemaEvolution,
  type EvolvedField,
} from '../pipeline/publish/index.js';
import { DEFAULT_CONFIG, DEFAULT_SCHEMA_CONTRACTS } from '../foundation/config/index.js';
import type { ExactlyOnceDelivery, SliceSource } from '../pipeline/slice/index.js';
import {
  createBufferedDriftStore,
  createRedisDriftStore,
  type BufferedDriftStore,
  type PageDrift,
} from '../pipeline/drift/index.js';
import { RESOURCES, type ResourceName } from '../foundation/models/index.js';
import type { ShortPages } from '../foundation/models/index.js';
import type { PageEvent } from '../upstream/client/index.js';

/** A Redis connection fit for BullMQ workers (`maxRetriesPerRequest: null`). */
export { connectRedis };

/**
 * The slice source over the client: `readSlice` with malformed items passed through (they are dead-lettered), and
 * short pages read as `shortPages` says (`GAMEDATA_SHORT_PAGES`; `verify` passes `confirm`).
 */
export function createClientSliceSource(
  client: Client,
  options: {
    pageSize?: number;
    shortPages?: ShortPages | undefined;
    onPageEvent?: ((resource: ResourceName, event: PageEvent) => void) | undefined;
  } = {},
): SliceSource {
  return {
    operation: (resource) => LISTING_SPECS[resource].procedure,
    async *readPages(slice, o) {
      const listing = createListing(slice.resource, slice.filters);
      // Each item that is not a record goes on wrapped with its page's position, to be dead-lettered (issue 48).
      let readAt = o.cursor ?? '';
      for await (const page of readSlice<unknown>(
        client,
        listing,
        { start: slice.start, end: slice.end },
        {
          cursor: o.cursor,
          signal: o.signal,
          limit: options.pageSize ?? 100,
          onInvalidItem: 'pass',
          shortPages: options.shortPages,
          onPageEvent: (event) => options.onPageEvent?.(slice.resource, event),
        },
      )) {
        // NotARecord is an object without `_id`: a DedupRecord that dedup passes and the encoder dead-letters.
        yield {
          items: wrapNotARecords<DedupRecord>(page.items, readAt) as DedupRecord[],
          cursor: page.cursor,
        };
        readAt = page.cursor ?? readAt;
      }
    },
    async enrich(resource, items, signal) {
      if (resource !== 'users') return items;
      // Listing items can be thin (`_id`, `createdAt`): fetch full profiles by id. Calls made together ride in
      // the same batched POSTs (50 per request).
      return Promise.all(
        items.map(async (item) => {
          const id = item._id;
          // A malformed listing item without a usable id goes on as it came, to be dead-lettered.
          if (typeof id !== 'string' || !/^[a-f\d]{24}$/.test(id)) return item;
          const full = await client.call('user.getUserById', { userId: id }, { signal });
          return (typeof full === 'object' && full !== null ? full : item) as DedupRecord;
        }),
      );
    },
  };
}

/**
 * Every user of the countries' listings (items without an id included, counted as unlisted by the caller).
 *
 * Planned for rounds (the key does not bind), every country's listing is read from its head and a full page splits
 * its unread past: at quadrupling depths first (the listing reaches back to the game's start, unknown here), then
 * into half-page pieces, all read in the next round (the client's `collectSlices`). A country of n users takes
 * ~log4 of its history's width over its head page's span in rounds instead of n / 100 in a row: scale medium's
 * largest country (~1 600 users) was 17 sequential pages, ~25 s of a full history's planning at the real service's
 * 0.6 s a request (issue 32). When the key binds, each listing is read in a row (fewest requests).
 */
async function listUsersOf(
  client: Client,
  listings: Listing[],
  onPage?: (items: readonly unknown[]) => void,
): Promise<DedupRecord[]> {
  if (!(client.budgetBinds?.() ?? false))
    return collectSlices<DedupRecord>(client, listings, {
      plan: 'rounds',
      oldestDate: 0,
      firstRoundSlices: 1,
      geometricAbove: USER_LISTING_GEOMETRIC_ABOVE,
      onInvalidItem: 'pass',
      onPage,
      now: Date.now,
    });
  const pages = await Promise.all(
    listings.map(async (listing) => {
      const items: DedupRecord[] = [];
      for await (const page of readSlice<DedupRecord>(
        client,
        listing,
        { start: 0, end: Infinity },
        { onInvalidItem: 'pass' },
      )) {
        items.push(...page.items);
        onPage?.(page.items);
      }
      return items;
    }),
  );
  return pages.flat();
}

/** The user ids of listing items (items without a string `_id` left out, as `userListing` counts them apart). */
function listedUserIds(items: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const item of items) {
    const id = typeof item === 'object' && item !== null ? (item as { _id?: unknown })._id : undefined;
    if (typeof id === 'string') ids.push(id);
  }
  return ids;
}

/** See {@link listUsersOf}: the per-user walks' rule (src/pipeline/slice/slice-split-rule.ts), for the same reason. */
const USER_LISTING_GEOMETRIC_ABOVE = USER_WALK_GEOMETRIC_ABOVE;

/** The planner's view of the upstream over the client. */
export function createClientPlannerSource(
  client: Client,
): PlannerSource & Required<Pick<PlannerSource, 'userListing'>> {
  return {
    probe: (resource, filters) => (before, limit) =>
      probeSortTimes(client, createListing(resource, filters), before, limit),
    // The partition proof's reads (planBackfill's `partition`): a listing's pages over a range.
    readPages: (resource, filters, range, cursor) =>
      readSlice<Record<string, unknown>>(client, createListing(resource, filters), range, {
        cursor,
        onInvalidItem: 'pass',
      }),
    // When the key's budget binds, the planner spends fewest requests; otherwise fewest rounds (docs/client.md).
    budgetBinds: () => client.budgetBinds?.() ?? false,
    async countryIds() {
      const countries = await client.call('country.getAllCountries', {});
      const list: unknown[] = Array.isArray(countries) ? countries : [];
      return list
        .map((c) => (typeof c === 'object' && c !== null ? (c as { _id?: unknown })._id : undefined))
        .filter((id): id is string => typeof id === 'string' && id !== '');
    },
    async userIds() {
      return (await this.userListing()).ids;
    },
    async userListing(countryIds?: readonly string[], onUsers?: (ids: readonly string[]) => void) {
      const ids = new Set<string>();
      let unlisted = 0;
      const listings = (countryIds ?? (await this.countryIds())).map((countryId) =>
        createListing('users', { countryId }),
      );
      const onPage =
        onUsers === undefined ? undefined : (items: readonly unknown[]) => onUsers(listedUserIds(items));
      for (const item of await listUsersOf(client, listings, onPage)) {
        if (typeof item._id === 'string') ids.add(item._id);
        else unlisted += 1;
      }
      return { ids: [...ids].sort(), unlisted };
    },
  };
}

/**
 * Client settings of a worker process. The upstream counts a batch of up to 50 calls as ONE request against its
 * rate limit and takes about as long for 50 calls as for one, so the worker favours few, full POSTs: few requests
 * in flight (a waiting request gathers every call queued meanwhile) and a short window to let slices catch up.
 */
export const PIPELINE_CLIENT_DEFAULTS = { maxInFlight: 4, batchWindowMs: 10 } as const;

export interface PipelineRuntime {
  settings: PipelineSettings;
  redis: Redis;
  client: Client;
  sink: KafkaSink;
  source: SliceSource;
  planner: PlannerSource;
  publisher: PagePublisher;
  /** Exactly-once delivery (`settings.delivery`, default exactly-once); undefined: at-least-once or no Kafka. */
  eos: ExactlyOnceDelivery | undefined;
  dedup: DedupStore;
  counters: RunCounters;
  /** The users each full-history transactions run knows (discovery of users the listings hide). */
  users: UserDirectory;
  /** The ranges tails could not read (issue 48): recorded and closed by the run worker, read by `status`. */
  gaps: RangeGaps;
  /** The runs of each resource, for claims by mark (`dedup/lone-runs.ts`): registered at their start, retired at their end. */
  runs: RunRegistry;
  /** The API key's shared upstream budget (undefined when the runtime was made with `budget: false`). */
  budget: SharedBudget | undefined;
  /** The pages' schema drift, written in batches (undefined when drift tracking is off or there is no registry). */
  drift: BufferedDriftStore | undefined;
  /** Writes the held drift, disconnects Kafka, closes the budget, then Redis. Close the workers first. */
  close(): Promise<void>;
}

export interface PipelineRuntimeOptions {
  /** Extra client options (timeouts, retry policy, pacing). */
  client?: Partial<ClientOptions>;
  /** Connect the Kafka producer (workers) or not (planner only). @default true */
  kafka?: boolean;
  /**
   * The API key's shared budget (keys under `<GAMEDATA_REDIS_PREFIX>:budget:`): options, or `false` to batch and
   * pace in this process alone. @default {} (shared)
   */
  budget?: Omit<SharedBudgetOptions, 'redis' | 'apiKey'> | false;
  /**
   * Told of each page's schema drift after it is handed to the Redis drift store (`<redisPrefix>:drift:<resource>`),
   * e.g. to count it in `/metrics`. Must not throw. @default none
   */
  onDrift?: (resource: ResourceName, drift: PageDrift) => void;
  /**
   * Told of each page a slice read went on from, or stopped at, abnormally (issue 48: an empty page with a moved cursor,
   * a full page without one; `page-check.ts`), e.g. to count it. Must not throw. @default none
   */
  onPageEvent?: (resource: ResourceName, event: PageEvent) => void;
  /**
   * Told when exactly-once fences a live producer of this process's own pool (issue 47: never expected; counted in
   * `gamedata_self_fences_total` and logged). Must not throw. @default none
   */
  onSelfFence?: (transactionalId: string, sliceKey: string) => void;
  /**
   * Track schema drift at all (issue 35). `false` only to measure its cost (bench/pipeline.ts `--no-drift`): no
   * counts, no `evolve`. @default true
   */
  driftTracking?: boolean;
  /** Told of each field the `evolve` contract registered (logs). @default none */
  onSchemaEvolved?: (field: EvolvedField) => void;
}

/** The API key's shared budget under `<redisPrefix>:budget:`. */
function createRuntimeBudget(
  settings: PipelineSettings,
  redis: Redis,
  options: Omit<SharedBudgetOptions, 'redis' | 'apiKey'> | undefined,
): SharedBudget {
  return createSharedBudget({
    prefix: `${settings.redisPrefix}:budget:`,
    // The hold weighs the slices queued and running across the deployment against the key's tokens.
    work: createWorkEstimator({
      source: createQueuedSlices({ connection: redis, prefix: settings.queuePrefix }),
    }),
    ...options,
    redis,
    apiKey: settings.apiKey,
    // Issue 48: the key's budget on this upstream only (staging and production never answer for each other).
    upstream: upstreamOrigin(settings.apiUrl),
  });
}

/** The origin of the API URL (`''` when it is not a URL: the budget is then the key's alone). */
function upstreamOrigin(apiUrl: string): string {
  try {
    return new URL(apiUrl).origin;
  } catch {
    return '';
  }
}

/** Closes the budget and drops both Redis connections at once (a runtime that failed while it was built). */
async function releaseConnections(budget: SharedBudget | undefined, redis: Redis, hot: Redis): Promise<void> {
  await budget?.close().catch(() => undefined);
  redis.disconnect();
  hot.disconnect();
}

/**
 * The page encoder's schema-drift hooks: each page's unknown fields and wrong-typed values, folded per page, held and
 * written in batches without failing a page (a Redis hiccup must not: the counts are an alarm, the records are what
 * is guaranteed; the store, for the slice's job to await and the runtime to close); and the `evolve` contract, asked
 * when a page of such a resource has a new field. None without a registry or with drift tracking off.
 */
function createDriftHooks(
  settings: PipelineSettings,
  hot: Redis,
  registry: ReturnType<typeof createRegistryClient> | undefined,
  options: PipelineRuntimeOptions,
): {
  onDrift?: (resource: ResourceName, drift: PageDrift) => void;
  evolve?: ReturnType<typeof createSchemaEvolution>;
  store?: BufferedDriftStore;
} {
  if (!(options.driftTracking ?? true) || registry === undefined) return {};
  // Pages' drift is written in batches (one script call per resource every 100 ms, not one per page).
  const driftStore = createBufferedDriftStore(createRedisDriftStore(hot, { prefix: settings.redisPrefix }));
  const onDrift = (resource: ResourceName, drift: PageDrift): void => {
    driftStore.record(resource, drift).catch(() => undefined);
    options.onDrift?.(resource, drift);
  };
  const contracts = settings.schemaContracts ?? DEFAULT_SCHEMA_CONTRACTS;
  const evolving = RESOURCES.filter((r) => contracts[r] === 'evolve');
  if (evolving.length === 0) return { onDrift, store: driftStore };
  return {
    onDrift,
    store: driftStore,
    evolve: createSchemaEvolution({
      registry,
      redis: hot,
      redisPrefix: settings.redisPrefix,
      topicPrefix: settings.topicPrefix,
      resources: evolving,
      store: driftStore,
      ...(options.onSchemaEvolved === undefined ? {} : { onEvolved: options.onSchemaEvolved }),
    }),
  };
}

/** The process's one client: the pipeline's defaults, then the settings', the caller's options and the budget. */
function createRuntimeClient(
  settings: PipelineSettings,
  options: Partial<ClientOptions> | undefined,
  budget: SharedBudget | undefined,
): Client {
  return createClient({
    baseUrl: settings.apiUrl,
    apiKey: settings.apiKey,
    ...PIPELINE_CLIENT_DEFAULTS,
    ...(settings.maxResponseBytes === undefined ? {} : { maxResponseBytes: settings.maxResponseBytes }),
    ...options,
    ...(budget === undefined ? {} : { budget }),
  });
}

/** The record encoder's options from the settings: the topic prefix, and the resources on the `discard` contract. */
function encoderOptionsOf(settings: PipelineSettings): {
  topicPrefix: string;
  discardUnknown: ResourceName[];
} {
  const contracts = settings.schemaContracts ?? DEFAULT_SCHEMA_CONTRACTS;
  return {
    topicPrefix: settings.topicPrefix,
    discardUnknown: RESOURCES.filter((r) => contracts[r] === 'discard'),
  };
}

/** The page-by-page publisher; without a registry (a runtime without Kafka), one that refuses every page. */
function createRuntimePublisher(
  registry: ReturnType<typeof createRegistryClient> | undefined,
  sink: KafkaSink,
  encoderOptions: ReturnType<typeof encoderOptionsOf>,
  drift: ReturnType<typeof createDriftHooks>,
): PagePublisher {
  return registry
    ? createPagePublisher({
        sink: createCoalescingSink(sink),
        encoder: createRecordEncoder({ registry, ...encoderOptions }),
        ...drift,
      })
    : {
        publishPage() {
          return Promise.reject(new ConfigError('this runtime was created without Kafka'));
        },
      };
}

/**
 * The runs of each resource (`dedup/lone-runs.ts`), on the slices' connection; a run whose job completed or failed is
 * over (a failed backfill never retires itself), read through BullMQ on `redis`.
 */
function createRuntimeRuns(settings: PipelineSettings, redis: Redis, hot: Redis): RunRegistry {
  return createRunRegistry(createRedisPendingMarks(hot), {
    prefix: settings.redisPrefix,
    isOver: async (runId) => {
      const state = (await getRunStatus(runId, { connection: redis, prefix: settings.queuePrefix }))?.state;
      return state === 'completed' || state === 'failed';
    },
  });
}

/** Builds every real dependency of the pipeline from the settings. */
export async function createPipelineRuntime(
  settings: PipelineSettings,
  options: PipelineRuntimeOptions = {},
): Promise<PipelineRuntime> {
  const redis = connectRedis(settings.redisUrl);
  // The slices' own calls (dedup claims and marks, intents, owners, counters, user discovery) on a connection of
  // their own that sends what is issued in one tick in one write: a shared transaction's commit resolves many
  // slices at once, and each then settles its pages and counts.
  const hot = connectRedis(settings.redisUrl, { autoPipelining: true });
  hot.on('error', () => undefined); // `redis` carries the errors to the service monitor
  const budget = options.budget === false ? undefined : createRuntimeBudget(settings, redis, options.budget);
  const client = createRuntimeClient(settings, options.client, budget);
  const sink = createKafkaSink({ brokers: settings.kafkaBrokers, clientId: 'gamedata-worker' });
  const useKafka = options.kafka ?? true;
  if (useKafka) {
    try {
      await sink.connect();
    } catch (error) {
      // Nothing of this runtime may outlive the failure (a worker retries; a command must exit after its line).
      await releaseConnections(budget, redis, hot);
      throw error;
    }
  }
  const registry = useKafka ? createRegistryClient({ url: settings.schemaRegistryUrl }) : undefined;
  const encoderOptions = encoderOptionsOf(settings);
  const { store: driftStore, ...drift } = createDriftHooks(settings, hot, registry, options);
  const publisher = createRuntimePublisher(registry, sink, encoderOptions, drift);
  // Exactly-once: pooled transactional producers (ids `<topicPrefix>.tx.m<n>.<i>`, m<n> leased in Redis), each
  // slice's owners recorded in Redis, checkpoints in `<prefix>.__slices`.
  const exactlyOnce =
    registry !== undefined && (settings.delivery ?? DEFAULT_CONFIG.delivery) === 'exactly-once';
  let member: Awaited<ReturnType<typeof leaseProducerMember>> | undefined;
  try {
    member = exactlyOnce ? await leaseProducerMember(redis, { prefix: settings.redisPrefix }) : undefined;
  } catch (error) {
    // As above: nothing of this runtime outlives the failure.
    await sink.disconnect().catch(() => undefined);
    await releaseConnections(budget, redis, hot);
    throw error;
  }
  const transactional =
    exactlyOnce && member !== undefined
      ? createTransactionalSlicePublisher({
          brokers: settings.kafkaBrokers,
          clientId: 'gamedata-worker',
          checkpointTopic: checkpointTopicName(settings.topicPrefix),
          transactionalIdPrefix: `${settings.topicPrefix}.tx`,
          member: () => member.current(),
          owners: createRedisSliceOwners(hot, { prefix: settings.redisPrefix }),
          ...(settings.transactionLingerMs === undefined ? {} : { lingerMs: settings.transactionLingerMs }),
          onSelfFence: options.onSelfFence,
        })
      : undefined;
  const eos: ExactlyOnceDelivery | undefined =
    transactional === undefined || registry === undefined
      ? undefined
      : {
          publisher: transactional,
          encode: createPageEncoder({
            encoder: createRecordEncoder({ registry, ...encoderOptions }),
            ...drift,
          }),
          marks: createPendingMarks(createRedisPendingMarks(hot), { prefix: settings.redisPrefix }),
        };
  return {
    settings,
    redis,
    client,
    sink,
    source: createClientSliceSource(client, {
      shortPages: settings.shortPages,
      onPageEvent: options.onPageEvent,
    }),
    planner: createClientPlannerSource(client),
    publisher,
    eos,
    dedup: createDedupStore(createRedisSeenSet(hot), { prefix: settings.redisPrefix }),
    counters: createRunCounters(hot, settings.redisPrefix, {
      ...(settings.retention === undefined ? {} : { retention: settings.retention }),
    }),
    users: createRedisUserDirectory(hot, settings.redisPrefix),
    gaps: createRangeGaps(hot, settings.redisPrefix),
    runs: createRuntimeRuns(settings, redis, hot),
    budget,
    drift: driftStore,
    async close() {
      await driftStore?.close();
      await sink.disconnect();
      await transactional?.close();
      await member?.close();
      await budget?.close();
      await hot.quit().catch(() => undefined);
      await redis.quit();
    },
  };
}
