/**
 * `gamedata simulate [serve]` runs the upstream simulator until SIGINT/SIGTERM and prints its base URL;
 * `gamedata simulate truth <resource>` prints a world's ground truth as NDJSON without a server.
 */
import { once } from 'node:events';
import { Option } from 'commander';
import type { Command } from 'commander';
import { ConfigError } from '../../../src/foundation/errors/index.js';
import {
  DEFAULT_LIVE_RATES,
  DEFAULT_SIMULATOR_OPTIONS,
  SIMULATOR_RESOURCES,
  createWorld,
  parseFaultSpec,
  parseLatencySpec,
  startSimulator,
} from '../index.js';
import type { Scale, SimulatorOptions, SimulatorResource, WorldOptions } from '../index.js';

/** The CLI's default port (tests use 0). */
export const DEFAULT_CLI_PORT = 4010;

function integer(option: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(
        `option --${option} must be an integer in ${min}..${max}, got ${JSON.stringify(value)}`,
      );
    return n;
  };
}

function positiveNumber(option: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0)
      throw new ConfigError(`option --${option} must be a number >= 0, got ${JSON.stringify(value)}`);
    return n;
  };
}

function isoDate(value: string): string {
  if (!Number.isFinite(Date.parse(value)))
    throw new ConfigError(`option --now must be an ISO-8601 date-time, got ${JSON.stringify(value)}`);
  return new Date(Date.parse(value)).toISOString();
}

/** Adds the options that define a world (shared by serve and truth). */
function withWorldOptions(command: Command): Command {
  return command
    .option(
      '--seed <n>',
      'world seed (same seed, same world)',
      integer('seed', 0, Number.MAX_SAFE_INTEGER),
      DEFAULT_SIMULATOR_OPTIONS.seed,
    )
    .addOption(
      new Option('--scale <scale>', 'world size')
        .choices(['small', 'medium', 'large'])
        .default(DEFAULT_SIMULATOR_OPTIONS.scale),
    )
    .option('--now <iso>', "the world's now (every record is older)", isoDate, DEFAULT_SIMULATOR_OPTIONS.now)
    .option('--no-extra-fields', 'leave out the fields upstream sends beyond the spec (sellerMuId, ...)');
}

interface WorldFlags {
  seed: number;
  scale: Scale;
  now: string;
  extraFields: boolean;
}

const worldOptions = (flags: WorldFlags): WorldOptions => ({
  seed: flags.seed,
  scale: flags.scale,
  now: flags.now,
  extraFields: flags.extraFields,
});

interface ServeFlags extends WorldFlags {
  port: number;
  host: string;
  cursor: 'v2' | 'v1';
  hasMore?: boolean;
  live?: number | true;
  changeRate?: number;
  speed?: number;
  faults?: string;
  latency?: string;
  rateLimit: boolean;
  keyedLimit?: number;
  anonymousLimit?: number;
  window: boolean;
  apiKeys?: string;
  fullUserListing?: boolean;
}

/** Turns the serve flags into simulator options (exported for tests). */
export function serveOptions(flags: ServeFlags): SimulatorOptions {
  const options: SimulatorOptions = {
    ...worldOptions(flags),
    port: flags.port,
    host: flags.host,
    cursor: flags.cursor,
    hasMore: flags.hasMore === true,
    window72h: flags.window,
    rateLimit: {
      enabled: flags.rateLimit,
      ...(flags.keyedLimit === undefined ? {} : { keyed: flags.keyedLimit }),
      ...(flags.anonymousLimit === undefined ? {} : { anonymous: flags.anonymousLimit }),
    },
  };
  if (flags.live !== undefined)
    options.live = {
      ratePerSecond: flags.live === true ? DEFAULT_LIVE_RATES.ratePerSecond : flags.live,
      changeRatePerSecond: flags.changeRate ?? DEFAULT_LIVE_RATES.changeRatePerSecond,
      speed: flags.speed ?? DEFAULT_LIVE_RATES.speed,
    };
  if (flags.faults !== undefined) options.faults = parseFaultSpec(flags.faults);
  if (flags.latency !== undefined) options.latency = parseLatencySpec(flags.latency);
  if (flags.apiKeys !== undefined)
    options.apiKeys = flags.apiKeys
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '');
  if (flags.fullUserListing === true) options.thinUserListing = false;
  return options;
}

async function serve(flags: ServeFlags): Promise<void> {
  const sim = await startSimulator(serveOptions(flags));
  console.log(sim.url);
  console.error(
    `simulator: seed ${flags.seed}, scale ${flags.scale}, now ${flags.now}, cursor ${flags.cursor}` +
      `${flags.live === undefined ? '' : ', live'}${flags.rateLimit ? '' : ', no rate limit'}` +
      ` (stats: ${sim.url.replace(/\/trpc$/, '')}/__sim/stats; Ctrl-C to stop)`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.close();
}

async function printTruth(resource: string, flags: WorldFlags): Promise<void> {
  if (!(SIMULATOR_RESOURCES as readonly string[]).includes(resource))
    throw new ConfigError(
      `unknown resource ${JSON.stringify(resource)} (known: ${SIMULATOR_RESOURCES.join(', ')})`,
    );
  const world = createWorld(worldOptions(flags));
  const store = world.store(resource as SimulatorResource);
  const variant = resource === 'articles' ? 'feed' : 'full';
  for (let row = store.table.length - 1; row >= 0; row--) {
    if (!process.stdout.write(`${JSON.stringify(store.build(row, variant))}\n`))
      await once(process.stdout, 'drain');
  }
}

export function register(program: Command): void {
  const simulate = program
    .command('simulate')
    .description(
      'Run the upstream simulator (a deterministic twin of the game-data API), or print its ground truth',
    );

  withWorldOptions(
    simulate
      .command('serve', { isDefault: true })
      .description(
        'Serve the simulated API; prints the base URL (http://host:port/trpc) and runs until SIGINT/SIGTERM',
      ),
  )
    .option(
      '--port <port>',
      'port to listen on (0 = any free port)',
      integer('port', 0, 65535),
      DEFAULT_CLI_PORT,
    )
    .option('--host <host>', 'address to bind', DEFAULT_SIMULATOR_OPTIONS.host)
    .addOption(
      new Option('--cursor <format>', 'cursor format emitted and accepted')
        .choices(['v2', 'v1'])
        .default('v2'),
    )
    .option('--has-more', 'send hasMore in pages (upstream does not)')
    .option(
      '--live [ratePerSecond]',
      'live mode: the clock runs, records arrive (default 9/s) and entities change',
      positiveNumber('live'),
    )
    .option(
      '--change-rate <perSecond>',
      'live mode: entity changes per second (default 1)',
      positiveNumber('change-rate'),
    )
    .option(
      '--speed <factor>',
      'live mode: simulated seconds per wall second (default 1)',
      positiveNumber('speed'),
    )
    .option(
      '--faults <spec>',
      'fault injection, e.g. 5xx=0.05,batch5xx=0.02,reset=0.01,hang=0.005,badjson=0.01,malformed=0.001,seed=7',
    )
    .option(
      '--latency <spec>',
      'latency model: realistic | 0 | request=600,procedure=0,feedHead=240,feedPerHour=90,filtered=270',
    )
    .option('--no-rate-limit', 'do not enforce the rate limit (and send no ratelimit-* headers)')
    .option(
      '--keyed-limit <n>',
      'requests per 60 s with a key (default 500)',
      integer('keyed-limit', 1, 1_000_000),
    )
    .option(
      '--anonymous-limit <n>',
      'requests per 60 s without a key (default 100)',
      integer('anonymous-limit', 1, 1_000_000),
    )
    .option(
      '--no-window',
      'let the unfiltered transaction feed reach the full history (upstream stops at 72 h)',
    )
    .option('--api-keys <keys>', 'comma-separated accepted keys (default: any non-empty key)')
    .option(
      '--full-user-listing',
      'users-by-country items carry the lite profile instead of only _id and createdAt',
    )
    .action(async (flags: ServeFlags) => serve(flags));

  withWorldOptions(
    simulate
      .command('truth')
      .description(
        `Print a resource's ground truth as NDJSON, newest first (resources: ${SIMULATOR_RESOURCES.join(', ')})`,
      )
      .argument(
        '<resource>',
        'articles | transactions | parties | users | elections | donations | countries',
      ),
  ).action(async (resource: string, flags: WorldFlags) => printTruth(resource, flags));
}
