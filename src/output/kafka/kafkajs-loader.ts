/**
 * The project's kafkajs: the one module that loads it (every other file of `output/kafka/` takes kafkajs' values from
 * {@link loadKafkajs} and only its types from 'kafkajs'). It loads kafkajs when first asked, not on import: two of the
 * project's patches replace kafkajs modules that kafkajs binds when it is itself first loaded
 * (`kafkajs-patches/message-grouping.ts`), so `createKafkaClient` installs the patches and only then asks for kafkajs.
 * A process that loaded kafkajs before (a test helper importing it directly) keeps kafkajs' own code there: the same
 * results, slower.
 */
import { createRequire } from 'node:module';
import type * as KafkaJs from 'kafkajs';

export type Kafka = KafkaJs.Kafka;

/** kafkajs' values the project uses. */
export interface KafkajsValues {
  Kafka: typeof KafkaJs.Kafka;
  Partitioners: typeof KafkaJs.Partitioners;
  logLevel: typeof KafkaJs.logLevel;
}

/** kafkajs, loaded on the first call (Node's module cache keeps it). */
export function loadKafkajs(): KafkajsValues {
  const kafkajs = createRequire(import.meta.url)('kafkajs') as typeof KafkaJs;
  return { Kafka: kafkajs.Kafka, Partitioners: kafkajs.Partitioners, logLevel: kafkajs.logLevel };
}
