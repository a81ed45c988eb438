import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `simulate` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('simulate')
    .description('(simulate: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the simulate command is not built yet');
    });
}
