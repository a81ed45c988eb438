import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `verify` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('verify')
    .description('(verify: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the verify command is not built yet');
    });
}
