import { afterEach, describe, expect, it } from 'vitest';
import {
  dropKafkajsNegativeTimeoutWarning,
  isKafkajsNegativeTimeout,
} from '../../../../src/app/cli/quiet-warnings.js';

/** Runs `process.emitWarning(...)` from code whose stack frames name `file` (V8 honours `sourceURL`). */
function warnFrom(file: string, type: string): void {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a frame with a chosen file name is the point
  const raise = new Function(
    'type',
    `process.emitWarning('-1795630108114 is a negative number.', type);\n//# sourceURL=${file}`,
  );
  (raise as (type: string) => void)(type);
}

describe('kafkajs negative-timeout warning', () => {
  const original = process.emitWarning.bind(process);
  const seen: string[] = [];
  const listener = (w: Error): void => void seen.push(`${w.name}: ${w.message}`);
  afterEach(() => {
    process.emitWarning = original;
    process.off('warning', listener);
    seen.length = 0;
  });

  it('matches only that warning from the kafkajs request queue', () => {
    const kafkajs =
      'at RequestQueue.scheduleCheckPendingRequests (/app/node_modules/kafkajs/src/network/requestQueue/index.js:317:37)';
    expect(isKafkajsNegativeTimeout('TimeoutNegativeWarning', kafkajs)).toBe(true);
    expect(isKafkajsNegativeTimeout('TimeoutNegativeWarning', 'at ours (/app/src/jobs/x.js:1:1)')).toBe(
      false,
    );
    expect(isKafkajsNegativeTimeout('DeprecationWarning', kafkajs)).toBe(false);
  });

  it('drops it from kafkajs, and lets every other warning through', async () => {
    process.on('warning', listener);
    dropKafkajsNegativeTimeoutWarning();
    warnFrom('/app/node_modules/kafkajs/src/network/requestQueue/index.js', 'TimeoutNegativeWarning');
    warnFrom('/app/src/jobs/ours.js', 'TimeoutNegativeWarning');
    warnFrom('/app/node_modules/kafkajs/src/network/requestQueue/index.js', 'ExperimentalWarning');
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([
      'TimeoutNegativeWarning: -1795630108114 is a negative number.',
      'ExperimentalWarning: -1795630108114 is a negative number.',
    ]);
  });
});
