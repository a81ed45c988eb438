#!/usr/bin/env node
// Package bin: runs the compiled CLI (dist/, built by `npm run build` on prepare/prepack).
// In a checkout without a build, use `npm run gamedata -- <args>` (tsx, from source).
await import('../dist/cli/main.js');
