/**
 * `gamedata verify <resource...>`: reads each topic from the beginning, decodes every value, and compares the set of
 * `(_id, version)` with the upstream's truth; prints matched / missing / unexpected / duplicate counts and the DLQ,
 * and exits 1 if anything is missing.
 * Truth: `--truth <dir>` holding `<resource>.ndjson` (what `gamedata simulate truth <resource>` prints for the same
 * world options), else the upstream re-read through the client (GAMEDATA_API_URL).
 * `--malformed <dir>` holding `<resource>.malformed` (one `_id` per line) names records expected in the DLQ.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../../../foundation/errors/index.js';
import { createRecordDecoder, createRegistryClient } from '../../../output/encoding/index.js';
import { createClientSliceSource, createPipelineRuntime } from '../../index.js';
import { readPipelineSettings } from '../../../foundation/config/index.js';
import { commandRedisLines } from '../connection-lines.js';
import { addressOf, requireReachable } from '../service-probes.js';
import { parseResources } from '../../../pipeline/planner/index.js';
import { collectUpstreamTruth, verifyResource, type VerifyReport } from '../../verify/index.js';

function readNdjson(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Prints one report as a table row set (CLI output). */
export function formatVerifyReport(r: VerifyReport): string {
  const lines = [
    `${r.topic}: ${r.ok ? 'OK' : 'MISSING RECORDS'}`,
    `  consumed ${r.consumed}, expected ${r.expected}, matched ${r.matched}, missing ${r.missing}, unexpected ${r.unexpected}, duplicates ${r.duplicates}, undecodable ${r.undecodable}`,
    `  DLQ ${r.dlq.topic}: ${r.dlq.messages} messages; malformed expected ${r.dlq.expected}, found ${r.dlq.found}`,
  ];
  if (r.missingSample.length > 0) lines.push(`  missing e.g. ${r.missingSample.join(', ')}`);
  if (r.unexpectedSample.length > 0) lines.push(`  unexpected e.g. ${r.unexpectedSample.join(', ')}`);
  if (r.duplicateSample.length > 0) lines.push(`  duplicates e.g. ${r.duplicateSample.join(', ')}`);
  return lines.join('\n');
}

export function register(program: Command): void {
  program
    .command('verify')
    .description(
      'compare topic content with the upstream truth, record by record; exit 1 if anything is missing',
    )
    .argument('<resource...>', 'resources to verify (or all)')
    .option('--truth <dir>', 'folder with <resource>.ndjson truth files (default: re-read the upstream)')
    .option('--malformed <dir>', 'folder with <resource>.malformed files (ids expected in the DLQ)')
    .option('--until <iso>', 'upstream truth: only records older than this')
    .option('--json', 'print the reports as JSON')
    .action(
      async (
        names: string[],
        flags: { truth?: string; malformed?: string; until?: string; json?: boolean },
      ) => {
        const resources = parseResources(names);
        const settings = readPipelineSettings({
          api: flags.truth === undefined,
          kafka: true,
          registry: true,
        });
        const decoder = createRegistryClient({ url: settings.schemaRegistryUrl });
        const until = flags.until === undefined ? undefined : Date.parse(flags.until);
        if (until !== undefined && Number.isNaN(until))
          throw new ConfigError(`--until must be ISO-8601, got ${JSON.stringify(flags.until)}`);
        await requireReachable({
          kafkaBrokers: settings.kafkaBrokers,
          schemaRegistryUrl: settings.schemaRegistryUrl,
          ...(flags.truth === undefined ? { redisUrl: settings.redisUrl } : {}),
        });
        const rt =
          flags.truth === undefined ? await createPipelineRuntime(settings, { kafka: false }) : undefined;
        if (rt !== undefined) commandRedisLines('verify', addressOf(settings.redisUrl)).watch(rt.redis);
        const reports: VerifyReport[] = [];
        try {
          for (const resource of resources) {
            const truth =
              flags.truth !== undefined
                ? readNdjson(join(flags.truth, `${resource}.ndjson`))
                : await collectUpstreamTruth(
                    // Reads confirm every short page (one page more, to an empty one): the truth does not rest on
                    // `GAMEDATA_SHORT_PAGES=end`, so an upstream that breaks it shows as rows missing from the topics.
                    createClientSliceSource(rt!.client, { shortPages: 'confirm' }),
                    rt!.planner,
                    resource,
                    until === undefined ? {} : { until },
                  );
            const malformedPath =
              flags.malformed === undefined ? undefined : join(flags.malformed, `${resource}.malformed`);
            const malformedIds = new Set(
              malformedPath !== undefined && existsSync(malformedPath)
                ? readFileSync(malformedPath, 'utf8')
                    .split('\n')
                    .map((l) => l.trim())
                    .filter((l) => l !== '')
                : [],
            );
            const report = await verifyResource({
              resource,
              brokers: settings.kafkaBrokers,
              topicPrefix: settings.topicPrefix,
              decoder: createRecordDecoder({ registry: decoder, topicPrefix: settings.topicPrefix }),
              truth,
              malformedIds,
            });
            reports.push(report);
            if (flags.json !== true) console.log(formatVerifyReport(report));
          }
        } finally {
          await rt?.close();
        }
        if (flags.json === true) console.log(JSON.stringify(reports, null, 2));
        if (reports.some((r) => !r.ok)) process.exitCode = 1;
      },
    );
}
