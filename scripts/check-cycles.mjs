#!/usr/bin/env node
// `npm run check:cycles`: fails (exit 1) when the wings of src/, or the folders inside them, import each other in a
// cycle. Reads every src/**/*.ts import (static `import`/`export ... from` and dynamic `import("...")`) with a
// relative specifier and builds two graphs: the wings, src/<wing> -> src/<wing>, and the folders,
// src/<wing>/<folder> -> src/<wing>/<folder> (a file directly in a wing, like app/pipeline-runtime.ts, is the wing's
// own node). Files directly in src/ (index.ts) are the package root and not part of either graph. Prints every cycle
// with one offending import per edge, and the count of edges at each level.
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

/** The wing of src/ a path belongs to (`src/<wing>`), or undefined for files directly in src/ (or outside it). */
function wingOf(path) {
  const parts = relative(src, path).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}

/** The five wings, in the data's order; any other folder of src/ (the simulator) is one node at both levels. */
const WINGS = new Set(['app', 'pipeline', 'output', 'upstream', 'foundation']);

/**
 * The folder inside a wing a path belongs to (`<wing>/<folder>`); a file directly in a wing is the wing's own node
 * (`<wing>`), and a folder of src/ that is not a wing is one node. Undefined for files directly in src/ (or outside).
 */
function folderOf(path) {
  const parts = relative(src, path).split(sep);
  if (parts.length < 2 || parts[0] === '..') return undefined;
  return parts.length > 2 && WINGS.has(parts[0]) ? `${parts[0]}/${parts[1]}` : parts[0];
}

const importPattern =
  /(?:\bimport|\bexport)\s[^'"]*?from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s*["']([^"']+)["']/g;

/** The graph of `nodeOf`: edges.get(from).get(to) = first offending import, "file:line -> specifier". */
function buildGraph(files, nodeOf) {
  const edges = new Map();
  for (const file of files) {
    const from = nodeOf(file);
    if (from === undefined) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(importPattern)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (!specifier.startsWith('.')) continue;
      const to = nodeOf(resolve(dirname(file), specifier));
      if (to === undefined || to === from) continue;
      const targets = edges.get(from) ?? new Map();
      edges.set(from, targets);
      if (!targets.has(to)) {
        const line = text.slice(0, match.index).split('\n').length;
        targets.set(to, `${relative(root, file)}:${line} imports "${specifier}"`);
      }
    }
  }
  return edges;
}

/** Strongly connected components (Tarjan) with more than one node: each holds a cycle. */
function cyclicComponents(edges) {
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
  return components;
}

/** One shortest cycle through `start` inside `members` (breadth-first), as a list of nodes. */
function cycleThrough(edges, start, members) {
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

/** Prints every cycle of `edges` (one offending import per edge); returns whether there was one. */
function reportCycles(edges) {
  const components = cyclicComponents(edges);
  const printed = new Set();
  for (const component of components) {
    const members = new Set(component);
    for (const start of component.sort()) {
      const cycle = cycleThrough(edges, start, members);
      const key = [...cycle].sort().join(',') + '|' + cycle.length;
      if (printed.has(key)) continue;
      printed.add(key);
      console.error(`cycle: ${[...cycle, cycle[0]].map((node) => `src/${node}`).join(' -> ')}`);
      cycle.forEach((from, i) => {
        const to = cycle[(i + 1) % cycle.length];
        console.error(`  ${from} -> ${to}: ${edges.get(from).get(to)}`);
      });
    }
  }
  return components.length > 0;
}

const edgeCount = (edges) => [...edges.values()].reduce((sum, targets) => sum + targets.size, 0);
const files = tsFiles(src);
const wingEdges = buildGraph(files, wingOf);
const folderEdges = buildGraph(files, folderOf);
const wingCycle = reportCycles(wingEdges);
const folderCycle = reportCycles(folderEdges);
const counts = `${edgeCount(wingEdges)} wing edges, ${edgeCount(folderEdges)} folder edges`;
if (wingCycle || folderCycle) {
  console.error(`check-cycles: import cycle(s) in src/ (${counts})`);
  process.exit(1);
}
console.log(`check-cycles: no import cycle between the wings or the folders of src/ (${counts})`);
