#!/usr/bin/env node
/**
 * `gamedata` CLI entry. Each sub-command lives in `commands/<name>.ts` and exports `register(program)`; this file
 * only wires them up and turns errors into one clear line and a non-zero exit code.
 */
import { Command, CommanderError } from 'commander';
import { GamedataError, ConfigError } from '../errors.js';
import { register as registerSimulate } from './commands/simulate.js';
import { register as registerSchemas } from './commands/schemas.js';
import { register as registerTopics } from './commands/topics.js';
import { register as registerBackfill } from './commands/backfill.js';
import { register as registerWorker } from './commands/worker.js';
import { register as registerVerify } from './commands/verify.js';
import { register as registerTail } from './commands/tail.js';
import { register as registerStatus } from './commands/status.js';
import { register as registerDemo } from './commands/demo.js';
import { register as registerConnect } from './commands/connect.js';

export function buildProgram(): Command {
  const program = new Command('gamedata')
    .description('Ingest the game-data API into Kafka: exact, deduplicated, Avro-described records.')
    .showHelpAfterError()
    .exitOverride();
  for (const register of [
    registerSimulate,
    registerSchemas,
    registerTopics,
    registerBackfill,
    registerWorker,
    registerVerify,
    registerTail,
    registerStatus,
    registerDemo,
    registerConnect,
  ]) {
    register(program);
  }
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    const e = GamedataError.from(error);
    console.error(`gamedata: ${e.name}: ${e.message}`);
    // Some ConfigErrors already list their issues in the message; print each issue once.
    if (e instanceof ConfigError)
      for (const issue of e.issues) if (!e.message.includes(issue)) console.error(`  - ${issue}`);
    process.exitCode = 1;
  }
}

await main(process.argv);
