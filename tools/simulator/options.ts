/**
 * Options of the simulator, typed once with their defaults in {@link DEFAULT_SIMULATOR_OPTIONS}, resolved (and
 * checked) once by {@link resolveSimulatorOptions}. The runtime part ({@link RuntimeSettings}) can be switched on
 * a running simulator with `configure()` (tests force a 429 storm or an outage that way).
 */
import { ConfigError } from '../../src/foundation/errors/index.js';
import { DEFAULT_WORLD_OPTIONS, SCALES, type LiveRates, type Scale, type WorldOptions } from './world.js';

export interface RateLimitSettings {
  /** Enforce the limit (429). When off, no `ratelimit-*` headers are sent either. @default true */
  enabled: boolean;
  /** Requests per window for a caller with an `X-API-Key` (counted per key). @default 500 */
  keyed: number;
  /** Requests per window without a key (counted per remote address). @default 100 */
  anonymous: number;
  /** Window length (ms), fixed windows starting at a caller's first request. @default 60000 */
  windowMs: number;
}

/**
 * Response-time model (all 0 by default), the real service's cost (upstream-facts.md, "What a call costs the
 * service"): a request takes ~0.6 s whatever its size; filtered listing pages ~0.27 s at any depth, side by side (50
 * in one request ~1.3 s); pages of the UNFILTERED transaction feed 0.24 s at the head plus 0.09 s per hour of depth,
 * SERIALISED per key (`feed-lane.ts`): a feed call waits for every earlier feed call of its key, in its request or
 * any other, and an abandoned request's calls still occupy the lane.
 */
export interface LatencySettings {
  /** Added to every HTTP request. @default 0 */
  requestMs: number;
  /** Added to every procedure call. @default 0 */
  procedureMs: number;
  /** Unfiltered transaction feed: cost at the head. @default 0 */
  feedHeadMs: number;
  /** Unfiltered transaction feed: extra cost per hour of depth below now. @default 0 */
  feedPerHourMs: number;
  /** Any filtered listing page. @default 0 */
  filteredMs: number;
  /**
   * Filtered pages of one request start this far apart (the service's dispatch; 50 filtered pages in one request
   * come back in ~1.3 s, not 0.87). @default 0
   */
  filteredPerCallMs: number;
}

/** Seeded fault injection. Rates are probabilities per request (or per call, or per record). */
export interface FaultSettings {
  /** Seed of the fault stream (faults repeat for the same sequence of requests). @default 7 */
  seed: number;
  /** Whole request answered 502/503. @default 0 */
  http5xx: number;
  /** One procedure inside a batch answered 500 (its own error envelope; the batch becomes 207). @default 0 */
  batch5xx: number;
  /** Connection reset without an answer (ECONNRESET). @default 0 */
  reset: number;
  /** Connection accepted and never answered. @default 0 */
  hang: number;
  /** 200 with a truncated, unparsable JSON body. @default 0 */
  badJson: number;
  /**
   * Share of records served corrupted (wrong type, missing `_id`, invalid date), chosen by record identity, so
   * the same records are corrupted on every read. `malformed(resource)` lists them. @default 0
   */
  malformed: number;
  /**
   * Share of listing pages served short while rows remain below them (cut to half their rows, at least one; chosen by
   * the page's first row, so every read of that page agrees). The real service is not known to do this: it breaks
   * what `GAMEDATA_SHORT_PAGES=end` assumes, for the tests of `confirm` and of `verify`. @default 0
   */
  shortPages: number;
  /**
   * Share of records served as no record at all (issue 48): `null`, or the record's id as a bare string in its place
   * (`not-object`), chosen by identity like `malformed` (which it does not move). `malformed(resource)` lists them with
   * kinds `null-item` and `not-object`. The pipeline must dead-letter them with the page's position. @default 0
   */
  badItems: number;
  /**
   * Bad pages (issue 48), each a share of listing pages drawn per read from the fault seed (a retry may be answered
   * well): `repeatCursor` gives back the cursor the page was read at (rows and all: the cursor does not move);
   * `emptyPages` serves a page with rows below it empty but with its real next cursor; `missingCursor` serves a full
   * page without `nextCursor`; `longPages` serves one row more than the `limit` asked for. @default 0 each
   */
  repeatCursor: number;
  emptyPages: number;
  missingCursor: number;
  longPages: number;
  /**
   * Share of requests answered 200 with a body of `oversizeBytes` (JSON whitespace, then a cut-off envelope): what the
   * client's byte cap (`GAMEDATA_MAX_RESPONSE_BYTES`) must refuse as it arrives. @default 0
   */
  oversize: number;
  /** Size of an `oversize` body, bytes (not a rate). @default 70 MiB (over the client's default cap of 64 MiB) */
  oversizeBytes: number;
}

/** Everything `configure()` can switch on a running simulator. */
export interface RuntimeSettings {
  /** Cursor format emitted (and expected). @default 'v2' */
  cursor: 'v2' | 'v1';
  /** Send `hasMore` in pages (the real service does not). @default false */
  hasMore: boolean;
  /** Accepted keys; `undefined` accepts any non-empty key. @default undefined */
  apiKeys: readonly string[] | undefined;
  rateLimit: RateLimitSettings;
  /** The unfiltered transaction feed only reaches back 72 h. @default true */
  window72h: boolean;
  latency: LatencySettings;
  faults: FaultSettings;
  /** `user.getUsersByCountry` items carry only `_id` and `createdAt`, as upstream. @default true */
  thinUserListing: boolean;
  /** `article.getArticleById` counts a view (changes `views`), as upstream may. @default true */
  countArticleViews: boolean;
}

/** A partial patch of the runtime settings (nested objects may be partial too). */
export type RuntimePatch = {
  [K in keyof RuntimeSettings]?: RuntimeSettings[K] extends readonly string[] | undefined
    ? RuntimeSettings[K]
    : RuntimeSettings[K] extends object
      ? Partial<RuntimeSettings[K]>
      : RuntimeSettings[K];
};

export interface SimulatorOptions extends WorldOptions, RuntimePatch {
  /** Port to listen on; 0 picks a free one (tests). @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /**
   * Live mode: the clock runs (simulated time = `now` + wall time elapsed x `speed`), new records arrive and
   * entities change. `false` keeps the world frozen at `now`. @default false
   */
  live?: (Partial<LiveRates> & { speed?: number }) | false;
}

export interface ResolvedSimulatorOptions {
  port: number;
  host: string;
  world: Required<WorldOptions>;
  live: (LiveRates & { speed: number }) | false;
  runtime: RuntimeSettings;
}

export const DEFAULT_RUNTIME_SETTINGS: RuntimeSettings = {
  cursor: 'v2',
  hasMore: false,
  apiKeys: undefined,
  rateLimit: { enabled: true, keyed: 500, anonymous: 100, windowMs: 60_000 },
  window72h: true,
  latency: {
    requestMs: 0,
    procedureMs: 0,
    feedHeadMs: 0,
    feedPerHourMs: 0,
    filteredMs: 0,
    filteredPerCallMs: 0,
  },
  faults: {
    seed: 7,
    http5xx: 0,
    batch5xx: 0,
    reset: 0,
    hang: 0,
    badJson: 0,
    malformed: 0,
    shortPages: 0,
    badItems: 0,
    repeatCursor: 0,
    emptyPages: 0,
    missingCursor: 0,
    longPages: 0,
    oversize: 0,
    oversizeBytes: 70 * 1024 * 1024,
  },
  thinUserListing: true,
  countArticleViews: true,
};

/** Latency close to the real service's (upstream-facts.md), for demos and pacing tests. */
export const REALISTIC_LATENCY: LatencySettings = {
  requestMs: 600,
  procedureMs: 0,
  feedHeadMs: 240,
  feedPerHourMs: 90,
  filteredMs: 270,
  filteredPerCallMs: 9,
};

export const DEFAULT_LIVE_RATES: LiveRates & { speed: number } = {
  ratePerSecond: 9,
  changeRatePerSecond: 1,
  speed: 1,
};

/** Every default in one place. */
export const DEFAULT_SIMULATOR_OPTIONS = {
  port: 0,
  host: '127.0.0.1',
  ...DEFAULT_WORLD_OPTIONS,
  live: false,
  ...DEFAULT_RUNTIME_SETTINGS,
} as const;

function check(ok: boolean, option: string, rule: string, value: unknown): void {
  if (!ok) throw new ConfigError(`option ${option} must be ${rule}, got ${JSON.stringify(value)}`);
}

const isRate = (x: unknown): boolean => typeof x === 'number' && x >= 0 && x <= 1;
const isNonNegative = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0;

/** Applies a patch to runtime settings, checking every value. @throws ConfigError naming the bad option. */
export function applyRuntimePatch(base: RuntimeSettings, patch: RuntimePatch): RuntimeSettings {
  const next: RuntimeSettings = {
    ...base,
    rateLimit: { ...base.rateLimit, ...patch.rateLimit },
    latency: { ...base.latency, ...patch.latency },
    faults: { ...base.faults, ...patch.faults },
  };
  if (patch.cursor !== undefined) next.cursor = patch.cursor;
  if (patch.hasMore !== undefined) next.hasMore = patch.hasMore;
  if ('apiKeys' in patch) next.apiKeys = patch.apiKeys;
  if (patch.window72h !== undefined) next.window72h = patch.window72h;
  if (patch.thinUserListing !== undefined) next.thinUserListing = patch.thinUserListing;
  if (patch.countArticleViews !== undefined) next.countArticleViews = patch.countArticleViews;
  check(next.cursor === 'v2' || next.cursor === 'v1', 'cursor', "'v2' or 'v1'", next.cursor);
  check(
    next.apiKeys === undefined ||
      (Array.isArray(next.apiKeys) && next.apiKeys.every((k) => typeof k === 'string' && k !== '')),
    'apiKeys',
    'undefined or a list of non-empty strings',
    next.apiKeys,
  );
  for (const k of ['keyed', 'anonymous', 'windowMs'] as const)
    check(
      Number.isInteger(next.rateLimit[k]) && next.rateLimit[k] > 0,
      `rateLimit.${k}`,
      'a positive integer',
      next.rateLimit[k],
    );
  for (const [k, v] of Object.entries(next.latency))
    check(isNonNegative(v), `latency.${k}`, 'a number >= 0', v);
  for (const [k, v] of Object.entries(next.faults))
    if (k === 'oversizeBytes')
      check(Number.isSafeInteger(v) && v > 0, `faults.${k}`, 'a positive integer', v);
    else if (k !== 'seed') check(isRate(v), `faults.${k}`, 'a rate between 0 and 1', v);
  check(Number.isSafeInteger(next.faults.seed), 'faults.seed', 'an integer', next.faults.seed);
  return next;
}

/** Resolves and checks options once. @throws ConfigError naming the option, the rule and the value. */
export function resolveSimulatorOptions(options: SimulatorOptions = {}): ResolvedSimulatorOptions {
  const port = options.port ?? DEFAULT_SIMULATOR_OPTIONS.port;
  check(Number.isInteger(port) && port >= 0 && port < 65536, 'port', 'an integer in 0..65535', port);
  const host = options.host ?? DEFAULT_SIMULATOR_OPTIONS.host;
  check(typeof host === 'string' && host !== '', 'host', 'a host name or address', host);
  const scale: Scale = options.scale ?? DEFAULT_WORLD_OPTIONS.scale;
  check(scale in SCALES, 'scale', 'small, medium or large', scale);
  const seed = options.seed ?? DEFAULT_WORLD_OPTIONS.seed;
  check(Number.isSafeInteger(seed) && seed >= 0, 'seed', 'a non-negative integer', seed);
  const now = options.now ?? DEFAULT_WORLD_OPTIONS.now;
  check(Number.isFinite(Date.parse(now)), 'now', 'an ISO-8601 date-time', now);
  let live: ResolvedSimulatorOptions['live'] = false;
  if (options.live !== undefined && options.live !== false) {
    live = { ...DEFAULT_LIVE_RATES, ...options.live };
    check(isNonNegative(live.ratePerSecond), 'live.ratePerSecond', 'a number >= 0', live.ratePerSecond);
    check(
      isNonNegative(live.changeRatePerSecond),
      'live.changeRatePerSecond',
      'a number >= 0',
      live.changeRatePerSecond,
    );
    check(isNonNegative(live.speed) && live.speed > 0, 'live.speed', 'a number > 0', live.speed);
  }
  const {
    port: _p,
    host: _h,
    seed: _s,
    scale: _sc,
    now: _n,
    live: _l,
    extraFields,
    transactionsWithoutCountry,
    shapeChanges,
    ...runtimePatch
  } = options;
  return {
    port,
    host,
    world: {
      seed,
      scale,
      now,
      extraFields: extraFields ?? DEFAULT_WORLD_OPTIONS.extraFields,
      transactionsWithoutCountry:
        transactionsWithoutCountry ?? DEFAULT_WORLD_OPTIONS.transactionsWithoutCountry,
      shapeChanges: shapeChanges ?? DEFAULT_WORLD_OPTIONS.shapeChanges,
    },
    live,
    runtime: applyRuntimePatch(DEFAULT_RUNTIME_SETTINGS, runtimePatch),
  };
}

const FAULT_KEYS: Record<string, keyof FaultSettings> = {
  '5xx': 'http5xx',
  http5xx: 'http5xx',
  batch5xx: 'batch5xx',
  reset: 'reset',
  hang: 'hang',
  badjson: 'badJson',
  malformed: 'malformed',
  shortpages: 'shortPages',
  baditems: 'badItems',
  repeatcursor: 'repeatCursor',
  emptypages: 'emptyPages',
  missingcursor: 'missingCursor',
  longpages: 'longPages',
  oversize: 'oversize',
  oversizebytes: 'oversizeBytes',
  seed: 'seed',
};

/**
 * Parses a CLI fault spec: `5xx=0.05,batch5xx=0.02,reset=0.01,hang=0.005,badjson=0.01,malformed=0.001,seed=7`.
 * @throws ConfigError on an unknown key or a bad value.
 */
export function parseFaultSpec(spec: string): Partial<FaultSettings> {
  const out: Partial<FaultSettings> = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const [rawKey, rawValue] = part.split('=', 2);
    const key = FAULT_KEYS[(rawKey ?? '').trim().toLowerCase()];
    if (key === undefined)
      throw new ConfigError(
        `option faults: unknown fault ${JSON.stringify(rawKey)} (known: ${Object.keys(FAULT_KEYS).join(', ')})`,
      );
    const value = Number(rawValue);
    if (rawValue === undefined || rawValue.trim() === '' || !Number.isFinite(value))
      throw new ConfigError(`option faults: ${rawKey} needs a number, got ${JSON.stringify(rawValue)}`);
    if (key === 'seed') check(Number.isSafeInteger(value), 'faults.seed', 'an integer', value);
    else if (key === 'oversizeBytes')
      check(Number.isSafeInteger(value) && value > 0, 'faults.oversizeBytes', 'a positive integer', value);
    else check(value >= 0 && value <= 1, `faults.${key}`, 'a rate between 0 and 1', value);
    out[key] = value;
  }
  return out;
}

/**
 * Parses a CLI latency spec: `realistic`, `0`/`off`, or `request=600,procedure=0,feedHead=240,feedPerHour=90,filtered=270,filteredPerCall=9`.
 * @throws ConfigError on an unknown key or a bad value.
 */
export function parseLatencySpec(spec: string): LatencySettings {
  const trimmed = spec.trim().toLowerCase();
  if (trimmed === 'realistic') return { ...REALISTIC_LATENCY };
  if (trimmed === '0' || trimmed === 'off' || trimmed === 'none')
    return { ...DEFAULT_RUNTIME_SETTINGS.latency };
  const keys: Record<string, keyof LatencySettings> = {
    request: 'requestMs',
    procedure: 'procedureMs',
    feedhead: 'feedHeadMs',
    feedperhour: 'feedPerHourMs',
    filtered: 'filteredMs',
    filteredpercall: 'filteredPerCallMs',
  };
  const out: LatencySettings = { ...DEFAULT_RUNTIME_SETTINGS.latency };
  for (const part of trimmed.split(',').filter((p) => p !== '')) {
    const [rawKey, rawValue] = part.split('=', 2);
    const key = keys[(rawKey ?? '').replace(/ms$/, '')];
    const value = Number(rawValue);
    if (key === undefined)
      throw new ConfigError(
        `option latency: unknown key ${JSON.stringify(rawKey)} (known: ${Object.keys(keys).join(', ')}, or "realistic")`,
      );
    check(Number.isFinite(value) && value >= 0, `latency.${key}`, 'a number of ms >= 0', rawValue);
    out[key] = value;
  }
  return out;
}
