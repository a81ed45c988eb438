/**
 * The project's kafkajs: the one module that loads it (every other file of `sink/` takes kafkajs' values from here
 * and only its types from 'kafkajs'). Some of the project's patches replace a kafkajs module that kafkajs binds when
 * it is itself first loaded (`message-grouping.ts`), so they go into the module cache here, before `require('kafkajs')`.
 * A process that loaded kafkajs before this module (a test helper importing it directly) keeps kafkajs' own code there:
 * the same results, slower.
 */
import { createRequire } from 'node:module';
import type * as KafkaJs from 'kafkajs';
import { installMessageGrouping } from './message-grouping.js';

installMessageGrouping();

const kafkajs = createRequire(import.meta.url)('kafkajs') as typeof KafkaJs;

export const Kafka: typeof KafkaJs.Kafka = kafkajs.Kafka;
export type Kafka = KafkaJs.Kafka;
export const Partitioners: typeof KafkaJs.Partitioners = kafkajs.Partitioners;
export const logLevel: typeof KafkaJs.logLevel = kafkajs.logLevel;
