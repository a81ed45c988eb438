// Readiness probe for the local stack: exit 0 when a Kafka broker at argv[2] answers an admin
// describeCluster (a real protocol round trip, not just an open port) with at least [brokers] brokers, else exit 1.
// Usage: node scripts/stack/kafka-ready.mjs 127.0.0.1:19092[,127.0.0.1:19102...] [timeoutMs=2000] [brokers=1]
// The secured stack (`stack.sh --secure`) passes its client settings in the environment, as the pipeline reads them:
// GAMEDATA_KAFKA_SECURITY_PROTOCOL (SSL/SASL_SSL), GAMEDATA_KAFKA_SASL_*, GAMEDATA_KAFKA_SSL_*_LOCATION.
import { readFileSync } from 'node:fs';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const [brokers = '127.0.0.1:19092', timeoutArg = '2000', expectedArg = '1'] = process.argv.slice(2);
const expected = Number(expectedArg);
const timeout = Number(timeoutArg);
const env = process.env;
const protocol = (env.GAMEDATA_KAFKA_SECURITY_PROTOCOL ?? 'PLAINTEXT').toUpperCase();
const file = (name) => (env[name] ? readFileSync(env[name], 'utf8') : undefined);
const security = {};
if (protocol === 'SSL' || protocol === 'SASL_SSL') {
  const tls = {
    ca: file('GAMEDATA_KAFKA_SSL_CA_LOCATION'),
    cert: file('GAMEDATA_KAFKA_SSL_CERTIFICATE_LOCATION'),
    key: file('GAMEDATA_KAFKA_SSL_KEY_LOCATION'),
  };
  for (const k of Object.keys(tls)) if (tls[k] === undefined) delete tls[k];
  security.ssl = Object.keys(tls).length === 0 ? true : tls;
}
if (protocol.startsWith('SASL_'))
  security.sasl = {
    mechanism: (env.GAMEDATA_KAFKA_SASL_MECHANISM ?? 'PLAIN').toLowerCase(),
    username: env.GAMEDATA_KAFKA_SASL_USERNAME ?? '',
    password: env.GAMEDATA_KAFKA_SASL_PASSWORD ?? '',
  };
const kafka = new Kafka({
  ...security,
  clientId: 'stack-ready',
  brokers: brokers.split(','),
  logLevel: logLevel.NOTHING,
  connectionTimeout: timeout,
  requestTimeout: timeout,
  retry: { retries: 0 },
});
const admin = kafka.admin();
const timer = setTimeout(() => {
  process.stderr.write(`kafka-ready: no answer from ${brokers} within ${timeout} ms\n`);
  process.exit(1);
}, timeout * 2);
try {
  await admin.connect();
  const cluster = await admin.describeCluster();
  if (cluster.brokers.length < Math.max(1, expected))
    throw new Error(`describeCluster returned ${cluster.brokers.length} broker(s), expected ${expected}`);
  process.stderr.write(`kafka-ready: cluster ${cluster.clusterId}, ${cluster.brokers.length} broker(s)\n`);
  clearTimeout(timer);
  await admin.disconnect();
  process.exit(0);
} catch (error) {
  process.stderr.write(`kafka-ready: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
