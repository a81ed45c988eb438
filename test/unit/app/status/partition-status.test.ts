/** What `status` and the workers' gauges show of a partition proof (issue 23). */
import { describe, expect, it } from 'vitest';
import { createPipelineMetrics } from '../../../../src/foundation/metrics/index.js';
import type { PartitionSummary } from '../../../../src/pipeline/planner/index.js';
import { formatPartition, parsePartition, setPartitionGauges } from '../../../../src/app/status/index.js';

const proof: PartitionSummary = {
  key: 'countryId',
  walks: 20,
  window: { start: Date.parse('2026-10-29T01:00:00.000Z'), end: Date.parse('2026-11-01T00:00:00.000Z') },
  provenTypes: ['trading', 'wage'],
  unprovenTypes: ['donation'],
  rows: { covered: 3500, uncovered: 12, repeated: 0, foreign: 0 },
  byType: {},
  pages: 88,
  unidentified: 0,
};

describe('partition status', () => {
  it('reads back the summary the run state keeps, and nothing from a missing or unreadable field', () => {
    expect(parsePartition({ partition: JSON.stringify(proof) })).toEqual(proof);
    expect(parsePartition({})).toBeUndefined();
    expect(parsePartition({ partition: '{not json' })).toBeUndefined();
    expect(parsePartition({ partition: '{"key":"countryId"}' })).toBeUndefined();
  });

  it('one status line names the outcomes and both type lists', () => {
    const line = formatPartition(proof);
    expect(line).toContain('3500 covered, 12 uncovered, 0 repeated, 0 foreign');
    expect(line).toContain('proven trading, wage; per user donation');
    expect(formatPartition({ ...proof, provenTypes: [], unprovenTypes: ['wage'] })).toContain('proven none');
  });

  it("sets gamedata_partition_rows by outcome and gamedata_partition_types per type, dropping an older proof's types", async () => {
    const metrics = createPipelineMetrics({ processMetrics: false });
    setPartitionGauges(metrics, { ...proof, provenTypes: ['openCase'], unprovenTypes: [] });
    setPartitionGauges(metrics, proof);
    const text = await metrics.render();
    expect(text).toContain('gamedata_partition_rows{outcome="covered"} 3500');
    expect(text).toContain('gamedata_partition_rows{outcome="uncovered"} 12');
    expect(text).toContain('gamedata_partition_types{type="wage",proven="true"} 1');
    expect(text).toContain('gamedata_partition_types{type="donation",proven="false"} 1');
    expect(text).not.toContain('type="openCase"');
  });
});
