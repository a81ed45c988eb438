/**
 * Issue 48, item 3: cursor pathologies used to end a slice as complete, with no line, and the watermark passed over
 * the gap. With the simulator's bad pages on (an empty page that carries its real cursor, a full page without a
 * cursor, the cursor given back, a row more than the limit), a backfill of donations and parties completes with every
 * record the simulator holds in its topic (read back against its truth).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './pipeline-harness.js';

describe('bad pages (issue 48, item 3)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('bad-pages', {
      faults: { seed: 17, emptyPages: 0.15, missingCursor: 0.15, repeatCursor: 0.05, longPages: 0.05 },
    });
    await h.startWorkers(16);
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('an empty page with a cursor, a missing cursor, a repeated cursor, a long page: nothing missing', async () => {
    await h.backfill({ resources: ['donations', 'parties'] }, 240_000);
    for (const resource of ['donations', 'parties'] as const) {
      const r = await h.verify(resource);
      expect({ resource, missing: r.missing, duplicates: r.duplicates }).toEqual({
        resource,
        missing: 0,
        duplicates: 0,
      });
    }
  }, 300_000);
});
