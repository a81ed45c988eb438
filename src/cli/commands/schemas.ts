import type { Command } from 'commander';
import { GamedataError } from '../../errors.js';

/** Placeholder until the `schemas` command is built (see the issue that owns it). */
export function register(program: Command): void {
  program
    .command('schemas')
    .description('(schemas: not built yet)')
    .allowUnknownOption()
    .action(() => {
      throw new GamedataError('the schemas command is not built yet');
    });
}
