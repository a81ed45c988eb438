#!/usr/bin/env node
// `npm run check:cycles`: fails (exit 1) when the folders of src/ import each other in a cycle.
// Reads every src/**/*.ts import (static `import`/`export ... from` and dynamic `import("...")`) with a relative
// specifier, builds the graph src/<folder> -> src/<folder> (files directly in src/, like errors.ts and index.ts,
// are the package root and not part of the graph), and prints every cycle with one offending import per edge.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** Every .ts file under `dir`, recursively. */
function tsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The src/ folder a path belongs to, or undefined for files directly in src/ (or outside it). */
function folderOf(path) {
  const parts = relative(src, path).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}

const importPattern =
  /(?:\bimport|\bexport)\s[^'"]*?from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s*["']([^"']+)["']/g;

/** edges.get(from).get(to) = first offending import, "file:line -> specifier". */
const edges = new Map();
for (const file of tsFiles(src)) {
  const from = folderOf(file);
  if (from === undefined) continue;
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(importPattern)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (!specifier.startsWith('.')) continue;
    const to = folderOf(resolve(dirname(file), specifier));
    if (to === undefined || to === from) continue;
    const targets = edges.get(from) ?? new Map();
    edges.set(from, targets);
    if (!targets.has(to)) {
      const line = text.slice(0, match.index).split('\n').length;
      targets.set(to, `${relative(root, file)}:${line} imports "${specifier}"`);
    }
  }
}

// Strongly connected components (Tarjan); each component with more than one folder holds a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let counter = 0;
function visit(node) {
  index.set(node, counter);
  low.set(node, counter);
  counter += 1;
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node)?.keys() ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(node, Math.min(low.get(node), index.get(next)));
    }
  }
  if (low.get(node) === index.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component);
  }
}
for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);

/** One shortest cycle through `start` inside `members` (breadth-first), as a list of folders. */
function cycleThrough(start, members) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (previous.get(path[0]) !== undefined) path.unshift(previous.get(path[0]));
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

if (components.length === 0) {
  console.log(`check-cycles: no import cycle between the ${edges.size} folders of src/`);
  process.exit(0);
}
const printed = new Set();
for (const component of components) {
  const members = new Set(component);
  for (const start of component.sort()) {
    const cycle = cycleThrough(start, members);
    const key = [...cycle].sort().join(',') + '|' + cycle.length;
    if (printed.has(key)) continue;
    printed.add(key);
    console.error(`cycle: ${[...cycle, cycle[0]].map((folder) => `src/${folder}`).join(' -> ')}`);
    cycle.forEach((from, i) => {
      const to = cycle[(i + 1) % cycle.length];
      console.error(`  ${from} -> ${to}: ${edges.get(from).get(to)}`);
    });
  }
}
process.exit(1);
