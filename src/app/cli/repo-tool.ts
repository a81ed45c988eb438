/**
 * The repository's own tools behind `gamedata simulate` and `gamedata demo` (tools/simulator/, tools/demo/). They are
 * not part of the published package: its tarball carries no simulator (docs/ARCHITECTURE.md, "The simulator is a
 * tool"). From a checkout, where the CLI runs from source (`npm run gamedata -- simulate ...`, tsx), the command
 * loads the tool's TypeScript module; from the compiled package it says, in one line, where the command lives.
 */
import { existsSync } from 'node:fs';
import { ConfigError } from '../../foundation/errors/index.js';
import type { CommandModule } from './command-table.js';

/** `tools/<path>.ts` of the checkout this module runs from (src/app/cli/ -> the repository root). */
function toolUrl(path: string): URL {
  return new URL(`../../../tools/${path}.ts`, import.meta.url);
}

/** True where the repository's tools can be loaded: the CLI runs from source and the tool's file is there. */
export function repoToolsAvailable(path: string): boolean {
  return import.meta.url.endsWith('.ts') && existsSync(toolUrl(path));
}

/** Loads `tools/<path>.ts` as a command module, or fails with one line saying it is a repository tool. */
export async function loadRepoTool(command: string, path: string): Promise<CommandModule> {
  if (!repoToolsAvailable(path)) {
    throw new ConfigError(
      `\`gamedata ${command}\` is a tool of the repository, not of the published package (it carries no simulator): ` +
        `run it from a checkout with \`npm run gamedata -- ${command} ...\``,
    );
  }
  return (await import(toolUrl(path).href)) as CommandModule;
}
