import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `topics` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('topics')
    .description('(topics: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the topics command is not built yet');
    });
}
