#!/usr/bin/env node
// Package bin: runs the compiled CLI (dist/, built by `npm run build`, which `prepare` runs on install and pack).
// In a checkout, `npm run gamedata -- <args>` runs it from source through tsx instead.
import { existsSync } from 'node:fs';

const main = new URL('../dist/app/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error(
    'gamedata: dist/ is missing: run `npm run build` (or `npm run gamedata -- <args>` from source)',
  );
  process.exit(1);
}
await import(main.href);
