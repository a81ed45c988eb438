/**
 * The Kafka client as a measured choice (issue 22): worker CPU per record of the transactional produce path, kafkajs
 * 2.2.4 (what the pipeline uses: one partition per produce request, as `transaction-requests.ts` sends) against
 * @platformatic/kafka (pure TypeScript; one send per transaction, its own request grouping), on the same records:
 * `--records` records of `--value-bytes` bytes with the pipeline's four lineage headers, keyed by a 24-hex id, on a
 * topic of 3 partitions, `--per-txn` records per transaction (a shared transaction of several slices' pages), acks
 * all. Each client runs in its own child process; CPU is the child's user + system time around the sends only.
 *
 * @platformatic/kafka is not a dependency of the project: install it outside the checkout and point at it, e.g.
 *   npm install --prefix /tmp/pk @platformatic/kafka@1.35.0
 *   npx tsx bench/kafka-clients.ts --platformatic /tmp/pk/node_modules/@platformatic/kafka [--rounds 2]
 * Services: KAFKA_BROKERS (`eval "$(scripts/stack.sh env)"`). Prints one Markdown row per client and round.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

const args = process.argv.slice(2);
const arg = (name: string, fallback?: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:19092').split(',');
const records = Number(arg('records', '20000'));
const valueBytes = Number(arg('value-bytes', '385'));
const perTxn = Number(arg('per-txn', '200'));
/** `--headers 0` sends no headers (how much of the cost the four lineage headers are). */
const headerCount = Number(arg('headers', '4'));

function makeRecords(): { key: string; value: Buffer; headers: Record<string, string> }[] {
  const headers = {
    'gamedata.run': 'transactions-full-1795629931035',
    'gamedata.slice': 'r_transactions_userId_6ac945b574ce7a3e4d000024.0-1793491200000',
    'gamedata.source': 'transaction.getPaginatedTransactions',
    'gamedata.fetchedAt': '2026-11-25T18:00:00.000Z',
  };
  const some = Object.fromEntries(Object.entries(headers).slice(0, headerCount));
  return Array.from({ length: records }, () => ({
    key: randomBytes(12).toString('hex'),
    value: randomBytes(valueBytes),
    headers: some,
  }));
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

/**
 * kafkajs as the pipeline runs it (`patched`: the client from `createKafkaClient`, the kafkajs loaded through
 * `kafkajs-loader.ts` after `installKafkajsPatches()`, the transaction's partitions announced as the producer pool does:
 * every patch of `src/output/kafka/kafkajs-patches/`),
 * or kafkajs as published (`--child kafkajs-plain`).
 */
async function runKafkajs(topic: string, patched: boolean): Promise<number> {
  const sink = {
    ...(await import('../src/output/kafka/kafka-client.js')),
    ...(await import('../src/output/kafka/kafka-options.js')),
    ...(await import('../src/output/kafka/producer/partitioner.js')),
    ...(await import('../src/output/kafka/producer/wire-format.js')),
  };
  const { installKafkajsPatches } = await import('../src/output/kafka/kafkajs-patches/index.js');
  const partitions = installKafkajsPatches().transactionPartitions;
  const kafka = patched
    ? sink.createKafkaClient(sink.resolveKafkaOptions({ brokers }), { clientId: 'bench-kafkajs' })
    : new Kafka({ clientId: 'bench-kafkajs', brokers, logLevel: logLevel.NOTHING });
  const transactionalId = `bench-kafkajs-${randomBytes(4).toString('hex')}`;
  const producer = kafka.producer({
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { initialRetryTime: 10, retries: 15 },
    ...(patched ? { createPartitioner: sink.givenPartitioner } : {}),
  });
  await producer.connect();
  const all = makeRecords();
  const { partitionForKey, toWire } = sink;
  const c0 = process.cpuUsage();
  for (let i = 0; i < all.length; i += perTxn) {
    const txn = await producer.transaction();
    const byPartition = new Map<number, typeof all>();
    for (const m of all.slice(i, i + perTxn)) {
      const p = partitionForKey(m.key, 3, 0);
      const list = byPartition.get(p);
      if (list === undefined) byPartition.set(p, [m]);
      else list.push(m);
    }
    if (patched)
      partitions.announce(
        transactionalId,
        [...byPartition.keys()].map((partition) => ({ topic, partition })),
      );
    const wire = toWire();
    // One partition per produce request, as the pipeline's transactions send.
    for (const [partition, ms] of byPartition)
      await txn.sendBatch({
        acks: -1,
        topicMessages: [{ topic, messages: ms.map((m) => wire(m, partition)) }],
      });
    await txn.commit();
    if (patched) partitions.forget(transactionalId);
  }
  const used = cpuMs(process.cpuUsage(c0));
  await producer.disconnect();
  return used;
}

async function runPlatformatic(topic: string, dir: string): Promise<number> {
  const mod = (await import(`${dir}/dist/index.js`)) as {
    Producer: new (o: object) => {
      beginTransaction(): Promise<{ send(o: object): Promise<unknown>; commit(): Promise<void> }>;
      close(): Promise<void>;
    };
    stringSerializers: object;
  };
  const producer = new mod.Producer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: brokers,
    transactionalId: `bench-platformatic-${randomBytes(4).toString('hex')}`,
    idempotent: true,
    acks: -1,
  });
  const all = makeRecords();
  const headerBuffers = (h: Record<string, string>): Map<Buffer, Buffer> =>
    new Map(Object.entries(h).map(([k, v]) => [Buffer.from(k), Buffer.from(v)]));
  // Warm-up transaction outside the measure (connect, InitProducerId, metadata), as kafkajs' connect() is.
  const warm = await producer.beginTransaction();
  await warm.send({ messages: [{ topic, key: Buffer.from('warm'), value: Buffer.from('x') }] });
  await warm.commit();
  const c0 = process.cpuUsage();
  for (let i = 0; i < all.length; i += perTxn) {
    const txn = await producer.beginTransaction();
    await txn.send({
      messages: all.slice(i, i + perTxn).map((m) => ({
        topic,
        key: Buffer.from(m.key),
        value: m.value,
        headers: headerBuffers(m.headers),
      })),
    });
    await txn.commit();
  }
  const used = cpuMs(process.cpuUsage(c0));
  await producer.close();
  return used;
}

async function child(): Promise<void> {
  const which = arg('child') as string;
  const topic = arg('topic') as string;
  const used =
    which === 'kafkajs' || which === 'kafkajs-plain'
      ? await runKafkajs(topic, which === 'kafkajs')
      : await runPlatformatic(topic, arg('platformatic') as string);
  process.stdout.write(`${JSON.stringify({ cpuMs: used })}\n`);
}

async function main(): Promise<void> {
  const platformatic = arg('platformatic');
  const rounds = Number(arg('rounds', '1'));
  const topic = `bench-clients-${Date.now()}`;
  const admin = new Kafka({ clientId: 'bench', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const self = fileURLToPath(import.meta.url);
  const load = (): string =>
    execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ');
  process.stdout.write(
    `| client | records | value B | headers | records per transaction | CPU ms | CPU us / record | load |\n|---|---:|---:|---:|---:|---:|---:|---|\n`,
  );
  for (let r = 0; r < rounds; r++) {
    for (const which of [
      'kafkajs-plain',
      'kafkajs',
      ...(platformatic === undefined ? [] : ['platformatic']),
    ]) {
      const out = spawnSync(
        process.execPath,
        [
          ...process.execArgv,
          self,
          '--child',
          which,
          '--topic',
          topic,
          '--records',
          String(records),
          '--value-bytes',
          String(valueBytes),
          '--per-txn',
          String(perTxn),
          '--headers',
          String(headerCount),
          ...(platformatic === undefined ? [] : ['--platformatic', platformatic]),
        ],
        { env: process.env, encoding: 'utf8' },
      );
      if (out.status !== 0) throw new Error(`${which} failed: ${out.stderr}`);
      const { cpuMs } = JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as { cpuMs: number };
      process.stdout.write(
        `| ${which === 'kafkajs' ? 'kafkajs 2.2.4, patched (src/output/kafka/)' : which === 'kafkajs-plain' ? 'kafkajs 2.2.4 as published' : '@platformatic/kafka'} | ${records} | ${valueBytes} | ${headerCount} | ${perTxn} | ${cpuMs.toFixed(0)} | ${((cpuMs * 1000) / records).toFixed(1)} | ${load()} |\n`,
      );
    }
  }
}

if (arg('child') !== undefined) await child();
else await main();
