/**
 * What one recovery read costs: `readCommitted` of the checkpoint reader (the read a slice taken over from a dead or
 * stalled owner makes before it publishes: ListOffsets, an end probe, and a throw-away read_committed consumer
 * group that is deleted afterwards), in worker CPU and wall time per read, in a warm process.
 *
 * Run against the stack (`eval "$(bash scripts/stack.sh env)"`): `npx tsx bench/recovery-read.ts [--reads 60]`.
 * It creates its own `rr<time>.*` topics and deletes them at the end.
 */
import { parseArgs } from 'node:util';
import { createKafkaClient } from '../src/output/kafka/kafka-client.js';
import { resolveKafkaOptions } from '../src/output/kafka/kafka-options.js';
import { createCheckpointReader } from '../src/output/kafka/transactions/checkpoint-reader.js';
import { checkpointTopicName, createTopics, deleteTopics } from '../src/output/kafka/admin/create-topics.js';
import { describeMachine } from './machine.js';

const { values } = parseArgs({
  options: { reads: { type: 'string', default: '60' }, slices: { type: 'string', default: '40' } },
});
const reads = Number(values.reads);
const slices = Number(values.slices);
for (const [name, n] of [
  ['--reads', reads],
  ['--slices', slices],
] as const)
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be an integer >= 1, got ${String(n)}`);

const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:19092').split(',');
const topicPrefix = `rr${Date.now()}`;
await createTopics({ brokers, topicPrefix, partitions: 3 });
const kafka = createKafkaClient(resolveKafkaOptions({ brokers }), { clientId: 'bench-recovery-read' });
const topic = checkpointTopicName(topicPrefix);
const reader = createCheckpointReader({
  kafka,
  checkpointTopic: topic,
  groupIdPrefix: topicPrefix,
  requestTimeoutMs: 30_000,
  recoveryTimeoutMs: 45_000,
  retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 },
  lsoMaxAgeMs: 5_000,
});
try {
  // Five checkpoints of each slice, written as a plain producer would (the read is the same for transactional ones).
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const keys = Array.from({ length: slices }, (_, i) => `bench-slice-${i}`);
  for (let seq = 0; seq < 5; seq++)
    await producer.send({
      topic,
      acks: -1,
      messages: keys.map((key) => ({ key, value: JSON.stringify({ seq, state: { key } }) })),
    });
  await producer.disconnect();

  await reader.readCommitted(keys[0]!, '0'); // warm-up: connections, metadata, JIT
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let found = 0;
  for (let i = 0; i < reads; i++) {
    const checkpoint = await reader.readCommitted<{ key: string }>(keys[i % keys.length]!, '0');
    if (checkpoint?.seq === 4) found += 1;
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  if (found !== reads)
    throw new Error(`${reads - found} of ${reads} reads did not find the slice's last checkpoint`);
  process.stdout.write(
    `${describeMachine()}\nrecovery reads: ${reads}, each found its slice's last checkpoint; ` +
      `${((cpu.user + cpu.system) / 1000 / reads).toFixed(1)} ms CPU and ${(wall / reads).toFixed(1)} ms wall per read\n`,
  );
} finally {
  await reader.close();
  await deleteTopics({ brokers, topicPrefix });
}
