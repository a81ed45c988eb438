import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { freshKafkajsModule } from '../../../../helpers/fresh-kafkajs-module.js';
import { groupMessagesPerPartition } from '../../../../../src/output/kafka/kafkajs-patches/message-grouping.js';
import type { GroupingInput } from '../../../../../src/output/kafka/kafkajs-patches/message-grouping.js';
import { createKafkaClient } from '../../../../../src/output/kafka/kafka-client.js';
import { resolveKafkaOptions } from '../../../../../src/output/kafka/kafka-options.js';

const require = createRequire(import.meta.url);
const path = require.resolve('kafkajs/src/producer/groupMessagesPerPartition.js');

/** kafkajs' own grouping, from a fresh copy of its module (whatever this process installed). */
function kafkajsGrouping(): (input: GroupingInput) => Record<number, unknown[]> {
  return freshKafkajsModule('kafkajs/src/producer/groupMessagesPerPartition.js');
}

describe('message grouping per partition', () => {
  const original = kafkajsGrouping();

  it("returns kafkajs' result (partitions, and each partition's messages in order) for any messages", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ partition: fc.integer({ min: 0, max: 11 }), n: fc.nat() }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 12 }),
        (messages, partitions) => {
          const input: GroupingInput = {
            topic: 't',
            partitionMetadata: Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 0 })),
            messages,
            partitioner: ({ message }) => (message as { partition: number }).partition,
          };
          const ours = groupMessagesPerPartition(input);
          const theirs = original(input);
          expect(Object.keys(ours)).toEqual(Object.keys(theirs));
          for (const key of Object.keys(theirs))
            // the same message objects, in the same order
            (theirs[Number(key)] as unknown[]).forEach((m, i) => expect(ours[Number(key)]?.[i]).toBe(m));
          expect(ours).toEqual(theirs);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is the grouping kafkajs uses once the project made a client (createKafkaClient installs it before kafkajs loads)', () => {
    const client = createKafkaClient(
      resolveKafkaOptions({ brokers: ['127.0.0.1:1'], ssl: false, sasl: false }),
    );
    expect(typeof client.producer).toBe('function');
    const installed = require(path) as (input: GroupingInput) => Record<number, unknown[]>;
    expect(installed).not.toBe(original);
    expect(
      (installed as unknown as Record<symbol, boolean>)[Symbol.for('gamedata.kafkaMessageGrouping')],
    ).toBe(true);
    // and kafkajs' producer took it: sendMessages holds the module's function from its own load
    expect(require.cache[require.resolve('kafkajs/src/producer/sendMessages.js')]).toBeDefined();
  });
});
