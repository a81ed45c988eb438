import { describe, expect, it } from 'vitest';
import { freshKafkajsModule } from '../../../../helpers/fresh-kafkajs-module.js';
import { cachingCoordinators } from '../../../../../src/output/kafka/kafkajs-patches/coordinator-cache.js';
import type { FindMetadata } from '../../../../../src/output/kafka/kafkajs-patches/coordinator-cache.js';

const TRANSACTION = 1;
const GROUP = 0;

/** kafkajs' Cluster class from a fresh copy of its module, unpatched whatever this process installed. */
function freshCluster(): {
  prototype: { findGroupCoordinator: (this: unknown, args: object) => Promise<unknown> };
} {
  return freshKafkajsModule('kafkajs/src/cluster/index.js');
}

/** A recording stand-in for kafkajs' FindCoordinator round trip: one call per request that reached the broker. */
function lookups(fail = 0) {
  const asked: string[] = [];
  let failures = fail;
  const original: FindMetadata = (args) => {
    asked.push(`${args.groupId}/${args.coordinatorType ?? GROUP}`);
    if (failures > 0) {
      failures -= 1;
      return Promise.reject(new Error('COORDINATOR_NOT_AVAILABLE'));
    }
    return Promise.resolve({ coordinator: { nodeId: 2 } });
  };
  return { asked, original };
}

describe("the transaction coordinator cache (kafkajs' FindCoordinator before every transactional request)", () => {
  it('kafkajs 2.2.4 asks the cluster for the coordinator on every look-up (the bug); patched, once per ttl', async () => {
    const Cluster = freshCluster();
    const plain = lookups();
    const cluster = {
      retrier: (fn: (bail: () => void, retryCount: number, retryTime: number) => Promise<unknown>) =>
        fn(() => undefined, 0, 0),
      findGroupCoordinatorMetadata: plain.original,
      findBroker: ({ nodeId }: { nodeId: number }) => Promise.resolve({ nodeId }),
    };
    const find = (c: object) =>
      Cluster.prototype.findGroupCoordinator.call(c, { groupId: 'tx.0', coordinatorType: TRANSACTION });
    await find(cluster);
    await find(cluster);
    await find(cluster);
    expect(plain.asked).toEqual(['tx.0/1', 'tx.0/1', 'tx.0/1']);

    const patched = lookups();
    const clock = { t: 0 };
    const patchedCluster = {
      ...cluster,
      findGroupCoordinatorMetadata: cachingCoordinators(patched.original, 1_000, () => clock.t),
    };
    await expect(find(patchedCluster)).resolves.toEqual({ nodeId: 2 });
    await find(patchedCluster);
    clock.t = 999;
    await find(patchedCluster);
    expect(patched.asked).toEqual(['tx.0/1']);
    clock.t = 1_000;
    await find(patchedCluster);
    expect(patched.asked).toEqual(['tx.0/1', 'tx.0/1']);
  });

  it('keeps entries per cluster and transactional.id, never caches group coordinators', async () => {
    const l = lookups();
    const cached = cachingCoordinators(l.original, 1_000, () => 0);
    const a = {};
    const b = {};
    await cached.call(a, { groupId: 'tx.0', coordinatorType: TRANSACTION });
    await cached.call(a, { groupId: 'tx.1', coordinatorType: TRANSACTION });
    await cached.call(b, { groupId: 'tx.0', coordinatorType: TRANSACTION });
    await cached.call(a, { groupId: 'tx.0', coordinatorType: TRANSACTION });
    await cached.call(a, { groupId: 'consumers', coordinatorType: GROUP });
    await cached.call(a, { groupId: 'consumers', coordinatorType: GROUP });
    await cached.call(a, { groupId: 'consumers' });
    expect(l.asked).toEqual(['tx.0/1', 'tx.1/1', 'tx.0/1', 'consumers/0', 'consumers/0', 'consumers/0']);
  });

  it('does not keep a failed look-up: the next one asks again', async () => {
    const l = lookups(1);
    const cached = cachingCoordinators(l.original, 1_000, () => 0);
    const cluster = {};
    await expect(cached.call(cluster, { groupId: 'tx.0', coordinatorType: TRANSACTION })).rejects.toThrow(
      'COORDINATOR_NOT_AVAILABLE',
    );
    await expect(cached.call(cluster, { groupId: 'tx.0', coordinatorType: TRANSACTION })).resolves.toEqual({
      coordinator: { nodeId: 2 },
    });
    await cached.call(cluster, { groupId: 'tx.0', coordinatorType: TRANSACTION });
    expect(l.asked).toEqual(['tx.0/1', 'tx.0/1']);
  });
});
