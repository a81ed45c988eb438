#!/usr/bin/env node
/**
 * `gamedata` CLI entry. Each sub-command lives in `commands/<name>.ts` and exports `register(program)`;
 * `command-table.ts` lists them (loaded lazily: only the command being run is imported). This file turns errors
 * into one clear line and a non-zero exit code.
 */
import { CommanderError } from 'commander';
import { GamedataError, ConfigError } from '../errors.js';
import { buildProgram } from './command-table.js';

async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(argv.slice(2))).parseAsync(argv);
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
