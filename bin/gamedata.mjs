#!/usr/bin/env node
// Package bin: runs the TypeScript CLI through tsx's ESM loader, so no build step is needed after `npm ci`.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
