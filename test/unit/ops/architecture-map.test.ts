// docs/ARCHITECTURE.md opens with the wings and a picture of the data's path: each must name every folder of today's
// src/ wings (`ls src/*/`), so a folder added or moved fails here until the first screen is brought up to date.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;
const WINGS = ['app', 'pipeline', 'output', 'upstream', 'foundation'];
const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8');

/** The folders directly inside `src/<wing>/`. */
const foldersOf = (wing: string): string[] =>
  readdirSync(join(root, 'src', wing)).filter((name) =>
    statSync(join(root, 'src', wing, name)).isDirectory(),
  );

describe("ARCHITECTURE.md's first screen matches src/", () => {
  const mermaid = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  const wingsTable = doc.slice(0, doc.indexOf('```mermaid'));

  it('src/ holds the five wings, no other folder (the simulator is a tool: tools/simulator/)', () => {
    const top = readdirSync(join(root, 'src')).filter((name) =>
      statSync(join(root, 'src', name)).isDirectory(),
    );
    expect(top.sort()).toEqual([...WINGS].sort());
  });

  it.each(WINGS)('the wings table names every folder of src/%s/', (wing) => {
    const row = wingsTable.split('\n').find((line) => line.startsWith(`| \`src/${wing}/\``)) ?? '';
    for (const folder of foldersOf(wing)) expect(row).toContain(`\`${folder}/\``);
  });

  it('the data-flow picture has a box for every folder of the wings that carry data', () => {
    expect(mermaid).not.toBe('');
    for (const wing of ['pipeline', 'output', 'upstream'])
      for (const folder of foldersOf(wing)) expect(mermaid).toMatch(new RegExp(`\\["${folder}/`));
    expect(mermaid).toContain('cli/');
  });
});
