import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `backfill` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('backfill')
    .description('(backfill: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the backfill command is not built yet');
    });
}
