/**
 * Chaos at a CI size (bench/chaos.ts does the same at >= 1 M records, see docs/guarantees.md): a full-history
 * backfill of the six resources (scale small, simulator latency on so the run outlasts the chaos) through two
 * `gamedata worker` processes on a PRIVATE stack this test starts itself (three Kafka nodes and Redis on their own
 * ports under .stack/chaos; the registry of the shared services is reused, nothing stops it), with upstream faults
 * and 429 storms on, while workers are killed with SIGKILL, Redis is restarted and one broker of the three is
 * stopped and brought back.
 *
 * Asserts: every chaos event landed while the run was going, the run completes, nothing is missing against the
 * truth, nothing unexpected or undecodable, every malformed record is in its DLQ, and no duplicates under exactly-once
 * delivery (the default: a read_committed reader reads every record once). Under at-least-once
 * (GAMEDATA_DELIVERY=at-least-once) duplicates come from crash windows and are bounded by kills x concurrency x page
 * size. The report traces any duplicate to its copies (partition, offset, producer, slice, time) and the chaos events
 * between them (see docs/guarantees.md, "Chaos").
 * CHAOS_BROKERS=1 runs it on a single-node stack (the broker is restarted instead).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatChaosReport, runChaos } from '../../bench/chaos.js';
import { takeHeavyTestLock } from '../helpers/heavy-test-lock.js';

const BROKERS = Number(process.env['CHAOS_BROKERS'] ?? 3);
const WORKERS = 2;
const CONCURRENCY = 16;
const KILLS = 4;

describe('chaos: SIGKILLed workers, a Redis restart and a stopped broker during a backfill', () => {
  // Not beside the exactly-once e2e in the other CI lane (see the helper).
  let release: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    release = await takeHeavyTestLock('chaos e2e');
  }, 900_000);
  afterAll(() => release());

  it('completes with nothing missing, every malformed record dead-lettered, no duplicates under exactly-once', async () => {
    const report = await runChaos({
      scale: 'small',
      brokers: BROKERS,
      workers: WORKERS,
      concurrency: CONCURRENCY,
      kills: KILLS,
      killEveryMs: 5_000,
      brokerDownMs: 10_000,
      stormEveryMs: 15_000,
      stormMs: 3_000,
      // Below the ephemeral range (see ChaosOptions.kafkaPort): 39102 was taken by a client socket once.
      kafkaPort: 23092,
      redisPort: 23379,
      // A run timed to outlast the chaos (kills at 5 and 10 s, then Redis and a broker, kills at ~22 and ~27 s) did
      // not on every box: 150 ms a request ended before the last two kills in a clean-clone CI and ran 43-57 s in
      // others. So the run is held back (each request answered after 4 s, within the client's 30 s timeout) while its
      // share of slices done is ahead of the chaos's share of kills, and runs at 150 ms a request otherwise.
      simulator: {
        latency: { requestMs: 150, procedureMs: 0, feedHeadMs: 0, feedPerHourMs: 0, filteredMs: 0 },
      },
      holdRequestMs: 4_000,
      timeoutMs: 600_000,
    });
    process.stderr.write(`${formatChaosReport(report)}\n`);

    expect(report.kills).toBe(KILLS);
    // The killed workers' slices went back to wait through the others' liveness sweeps, before their locks expired.
    expect(report.takenOver).toBeGreaterThan(0);
    expect(report.redisRestarts).toBe(1);
    expect(report.brokerStops).toBe(1);
    // The failures hit a running pipeline (the SIGKILLs, the Redis restart, the broker stop).
    expect(report.events.filter((e) => !e.midRun && !e.what.includes('back'))).toEqual([]);
    expect(report.records).toBeGreaterThan(10_000);
    expect({
      missing: report.missing,
      unexpected: report.unexpected,
      undecodable: report.undecodable,
    }).toEqual({ missing: 0, unexpected: 0, undecodable: 0 });
    expect(report.dlq.malformed).toBeGreaterThan(0);
    expect(report.dlq.found).toBe(report.dlq.malformed);
    // At-least-once: each kill can leave at most one acked-but-unmarked page per running slice (100 records).
    expect(report.duplicates).toBeLessThanOrEqual(KILLS * CONCURRENCY * 100);
    // Exactly-once (the default): none. The traces say where any came from.
    if (report.delivery === 'exactly-once' || process.env['CHAOS_ASSERT_NO_DUPLICATES'] === '1')
      expect({ duplicates: report.duplicates, traces: report.duplicateTraces.slice(0, 5) }).toEqual({
        duplicates: 0,
        traces: [],
      });
  }, 900_000);
});
