/** Which slice a run's failure names: BullMQ fails a parent with `child <prefix>:<queue>:<job id> failed`. */
import { describe, expect, it } from 'vitest';
import { failedSliceId } from '../../../../src/pipeline/queue/backfill-flow.js';

describe('failedSliceId', () => {
  it("reads the slice's job id from BullMQ's reason, under the deployment's prefix", () => {
    expect(
      failedSliceId(
        'child e2eq-x:gamedata-slices:run-1.r_transactions_userId_6a98.0-1793491200000 failed',
        'e2eq-x',
      ),
    ).toBe('run-1.r_transactions_userId_6a98.0-1793491200000');
    expect(failedSliceId('child gamedata-bull:gamedata-slices:a.b failed')).toBe('a.b');
  });

  it('is undefined for any other reason, another prefix or another queue', () => {
    expect(failedSliceId('the run was cancelled')).toBeUndefined();
    expect(failedSliceId('child other:gamedata-slices:a.b failed', 'gamedata')).toBeUndefined();
    expect(failedSliceId('child gamedata:gamedata-runs:a.b failed', 'gamedata')).toBeUndefined();
    expect(failedSliceId('child gamedata:gamedata-slices: failed', 'gamedata')).toBeUndefined();
  });
});
