import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `status` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('status')
    .description('(status: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the status command is not built yet');
    });
}
