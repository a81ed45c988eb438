#!/usr/bin/env node
/**
 * `gamedata` CLI entry. Each sub-command lives in `commands/<name>.ts` and exports `register(program)`;
 * `command-table.ts` lists them (loaded lazily: only the command being run is imported). This file turns errors
 * into one clear line and a non-zero exit code.
 */
import { CommanderError } from 'commander';
import { GamedataError, ConfigError } from '../../foundation/errors/index.js';
import { buildProgram } from './command-table.js';
import { maskSecrets } from './mask-secrets.js';
import { dropKafkajsNegativeTimeoutWarning } from './quiet-warnings.js';
import { loadConfig, plaintextCredentialWarnings } from '../../foundation/config/index.js';

/** Prints `error` as one line (a ConfigError's issues below it) and makes the process exit 1 soon after. */
function fail(error: unknown): void {
  const e = GamedataError.from(error);
  // Some ConfigErrors already list their issues in the message; print each issue once (one issue: on the same line).
  const unsaid = e instanceof ConfigError ? e.issues.filter((issue) => !e.message.includes(issue)) : [];
  const line = `gamedata: ${e.name}: ${e.message}${unsaid.length === 1 ? `: ${unsaid[0]}` : ''}`;
  // Never a secret: an upstream may echo the API key in its error, a driver its connection URL.
  console.error(maskSecrets(line));
  if (unsaid.length > 1) for (const issue of unsaid) console.error(maskSecrets(`  - ${issue}`));
  process.exitCode = 1;
  exitSoon();
}

/**
 * Every command exits after its fatal line: whatever the failed command left open (a Redis connection that
 * reconnects forever, a kafkajs retry timer, a listening socket) must not keep the process alive. Pending writes
 * get a moment; the timer is unref'd, so a process with nothing left open exits at once.
 */
function exitSoon(): void {
  setTimeout(() => process.exit(), 500).unref();
}

/** One warning line per credential that would cross the network in plain text (never its value). */
function warnPlaintextCredentials(): void {
  let config;
  try {
    config = loadConfig();
  } catch {
    return; // an invalid configuration is the command's own one line
  }
  for (const line of plaintextCredentialWarnings(config, config))
    console.error(maskSecrets(`gamedata: warning: ${line}`));
}

async function main(argv: string[]): Promise<void> {
  // A failure outside the command's own promise chain (an event handler, a timer) is one line too, never a trace.
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  // Node 24: kafkajs' harmless negative setTimeout would print a warning line per process.
  dropKafkajsNegativeTimeoutWarning();
  warnPlaintextCredentials();
  try {
    await (await buildProgram(argv.slice(2))).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      if (error.exitCode !== 0) exitSoon();
      return;
    }
    fail(error);
  }
}

await main(process.argv);
