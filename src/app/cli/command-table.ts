/**
 * The `gamedata` sub-commands, loaded lazily: {@link COMMANDS} names each one with its description and a loader, so
 * `gamedata --help` lists every command without importing any, and `gamedata <cmd> ...` imports only `<cmd>`'s
 * module (and what it uses). A new command is one entry in the table; test/unit/app/cli/command-table.test.ts checks
 * that each description matches the module's own.
 */
import { Command } from 'commander';
import { loadRepoTool } from './repo-tool.js';

/** What a command module exports. */
export interface CommandModule {
  register(program: Command): void;
}

export interface CommandEntry {
  /** Shown by `gamedata --help`; the same text as the module's own `.description(...)`. */
  description: string;
  load: () => Promise<CommandModule>;
}

/** Every sub-command, in the order `--help` lists them. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  simulate: {
    description:
      'Run the upstream simulator (a deterministic twin of the game-data API), or print its ground truth',
    load: () => loadRepoTool('simulate', 'simulator/cli/simulate-command'),
  },
  schemas: {
    description: 'Generate, register and check the Avro schemas of the topics',
    load: () => import('./commands/schemas.js'),
  },
  topics: {
    description: 'Kafka topics of the pipeline',
    load: () => import('./commands/topics.js'),
  },
  backfill: {
    description: 'plan a backfill of resources into Kafka and enqueue it (run + slice jobs) for the workers',
    load: () => import('./commands/backfill.js'),
  },
  worker: {
    description: 'process backfill slices: fetch -> dedup -> Avro -> Kafka -> ack -> mark seen -> checkpoint',
    load: () => import('./commands/worker.js'),
  },
  verify: {
    description:
      'compare topic content with the upstream truth, record by record; exit 1 if anything is missing',
    load: () => import('./commands/verify.js'),
  },
  tail: {
    description:
      'keep topics fresh: incremental tails every N (or full backfills on a cron), fired by the workers',
    load: () => import('./commands/tail.js'),
  },
  status: {
    description: 'runs, slices, records, tail lag, workers and upstream rate-limit headroom',
    load: () => import('./commands/status.js'),
  },
  demo: {
    description:
      'simulator -> workers -> backfill of all six resources -> Kafka -> verify, with a summary table',
    load: () => loadRepoTool('demo', 'demo/demo-command'),
  },
  connect: {
    description: 'Kafka Connect sinks into the PostgreSQL warehouse or Apache Iceberg tables',
    load: () => import('./commands/connect.js'),
  },
  dedup: {
    description: 'the seen-sets that keep records from being published twice',
    load: () => import('./commands/dedup.js'),
  },
  dlq: {
    description: 'dead-letter topics: replay what now encodes',
    load: () => import('./commands/dlq.js'),
  },
};

function rootCommand(): Command {
  return (
    new Command('gamedata')
      .description('Ingest the game-data API into Kafka: exact, deduplicated, Avro-described records.')
      // A usage error is one line like every other failure (`gamedata: unknown option '--nope' ...`), with a
      // pointer to the help instead of the whole help text.
      .configureOutput({
        outputError: (text, write) =>
          write(
            `gamedata: ${text
              .replace(/^error: /, '')
              .trim()
              .replace(/\s*\n\s*/g, ' ')} (see --help)\n`,
          ),
      })
      .exitOverride()
  );
}

/** The command `argv` (user arguments, without node and the script) names, if it names one of {@link COMMANDS}. */
export function commandNamed(args: readonly string[]): string | undefined {
  const i = args.findIndex((a) => !a.startsWith('-'));
  if (i < 0) return undefined;
  // `gamedata help <cmd>` is commander's spelling of `gamedata <cmd> --help`.
  const name = args[i] === 'help' ? args[i + 1] : args[i];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
}

/**
 * The program for `args`: the named command fully registered (its module imported), every other command as a
 * name and description only (enough for the listing, `help` and unknown-command suggestions).
 * `args` undefined: every command loaded (tests).
 */
export async function buildProgram(args?: readonly string[]): Promise<Command> {
  const program = rootCommand();
  const wanted = args === undefined ? undefined : commandNamed(args);
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (args === undefined || name === wanted) (await entry.load()).register(program);
    else program.command(name).description(entry.description);
  }
  return program;
}
