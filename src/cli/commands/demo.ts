import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `demo` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('demo')
    .description('(demo: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the demo command is not built yet');
    });
}
