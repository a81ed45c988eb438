import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `worker` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('worker')
    .description('(worker: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the worker command is not built yet');
    });
}
