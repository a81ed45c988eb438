/**
 * `gamedata dlq replay`'s wiring (issue 48, item 8): the pipeline's runtime (its client on the key's shared budget, its
 * dedup, counters and delivery mode), an encoder with the topics' schema contracts to check the dead letters again,
 * and the upstream's reads by id. The work is `replayDeadLetters` (src/pipeline/dead-letters/).
 */
import type { PipelineSettings } from '../foundation/config/index.js';
import { DEFAULT_SCHEMA_CONTRACTS } from '../foundation/config/index.js';
import { RESOURCES, type ResourceName, topicName } from '../foundation/models/index.js';
import { createRecordEncoder, createRegistryClient } from '../output/encoding/index.js';
import { READ_BY_ID, replayDeadLetters, type DlqReplayReport } from '../pipeline/dead-letters/index.js';
import { createPipelineRuntime, type PipelineRuntimeOptions } from './pipeline-runtime.js';

export interface DlqReplayRequest {
  resource: ResourceName;
  /** Dead letters written at or after this time (ms). @default 0 */
  since?: number | undefined;
  /** ... and before this time (ms). @default no bound */
  until?: number | undefined;
}

/**
 * Replays the resource's dead letters against the deployment `settings` name (see `replayDeadLetters`).
 * @throws ServiceError when a service fails (running it again is safe)
 */
export async function runDlqReplay(
  settings: PipelineSettings,
  request: DlqReplayRequest,
  runtimeOptions: PipelineRuntimeOptions = {},
): Promise<DlqReplayReport> {
  const runtime = await createPipelineRuntime(settings, runtimeOptions);
  try {
    const contracts = settings.schemaContracts ?? DEFAULT_SCHEMA_CONTRACTS;
    // The encoder the pipeline writes with (the same schema contracts), here only to check the records again.
    const encoder = createRecordEncoder({
      registry: createRegistryClient({ url: settings.schemaRegistryUrl }),
      topicPrefix: settings.topicPrefix,
      discardUnknown: RESOURCES.filter((r) => contracts[r] === 'discard'),
    });
    return await replayDeadLetters({
      resource: request.resource,
      topic: topicName(settings.topicPrefix, request.resource),
      brokers: settings.kafkaBrokers,
      since: request.since,
      until: request.until,
      deps: {
        dedup: runtime.dedup,
        publisher: runtime.publisher,
        counters: runtime.counters,
        eos: runtime.eos,
      },
      validate: (resource, record) => encoder.encode(resource, record),
      // A stored copy of an article or election older than a version seen since stays (it would go back in time).
      newerSeen: (resource, records) =>
        runtime.dedup.newerSeen?.(resource, records) ?? Promise.resolve(records.map(() => false)),
      refetch: (resource, id) => {
        const read = READ_BY_ID[resource];
        // recheckDeadLetters asks only for the resources READ_BY_ID names.
        return read === undefined
          ? Promise.resolve(undefined)
          : runtime.client.call(read.procedure, { [read.input]: id });
      },
    });
  } finally {
    await runtime.close();
  }
}
