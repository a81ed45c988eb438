import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  installKafkajsPatches,
  KAFKAJS_PATCHED_VERSION,
} from '../../../../../src/output/kafka/kafkajs-patches/index.js';

const require = createRequire(import.meta.url);

describe('the kafkajs patches as one set', () => {
  it('kafkajs is pinned exactly to the release the patches were written for, and that release is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // A different kafkajs may lack or change what the patches replace: update the patches (and this constant) first.
    expect(pkg.dependencies.kafkajs).toBe(KAFKAJS_PATCHED_VERSION);
    expect((require('kafkajs/package.json') as { version: string }).version).toBe(KAFKAJS_PATCHED_VERSION);
  });

  it('installKafkajsPatches installs all seven, once: a second call changes nothing and returns the same handles', () => {
    const first = installKafkajsPatches();
    const methods = {
      'kafkajs/src/network/requestQueue/index.js': [
        'scheduleCheckPendingRequests',
        'gamedata.requestQueueIdleTimer',
      ],
      'kafkajs/src/broker/index.js#fetch': ['fetch', 'gamedata.readCommittedFilter'],
      'kafkajs/src/broker/index.js#add': ['addPartitionsToTxn', 'gamedata.transactionPartitionsAhead'],
      'kafkajs/src/cluster/index.js': [
        'findGroupCoordinatorMetadata',
        'gamedata.transactionCoordinatorCache',
      ],
    } as const;
    const installed = () =>
      Object.entries(methods).map(([path, [method, tag]]) => {
        const proto = (require(path.split('#')[0] as string) as { prototype: Record<string, unknown> })
          .prototype;
        const fn = proto[method] as Record<symbol, unknown>;
        expect(fn[Symbol.for(tag)]).toBe(true);
        return fn;
      });
    const before = installed();
    const second = installKafkajsPatches();
    expect(second.transactionPartitions).toBe(first.transactionPartitions);
    expect(installed()).toEqual(before);
    installed().forEach((fn, i) => expect(fn).toBe(before[i]));
    // The two module-cache patches: in place when kafkajs loads after the install (message-grouping.test.ts shows it
    // for the grouping); the record encoder is replaced in the module cache.
    const record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as Record<symbol, unknown>;
    expect(record[Symbol.for('gamedata.kafkaRecordEncoding')]).toBe(true);
    const crc = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as Record<symbol, unknown>;
    expect(crc[Symbol.for('gamedata.crc32c')]).toBe(true);
  });
});
