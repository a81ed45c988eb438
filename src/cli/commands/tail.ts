import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `tail` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('tail')
    .description('(tail: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the tail command is not built yet');
    });
}
