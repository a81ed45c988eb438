import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../src/foundation/errors/index.js';
import { childArgv, parseWorkerFlags } from '../../../../src/app/cli/worker-flags.js';
import type { WorkerFlagValues } from '../../../../src/app/cli/worker-flags.js';

/** The defaults commander hands over. */
const defaults: WorkerFlagValues = {
  concurrency: '32',
  lockDuration: '30000',
  stalledInterval: '15000',
  livenessTimeout: '10000',
  schedules: true,
};

describe('parseWorkerFlags', () => {
  it('--max-concurrency: an integer >= --concurrency, one clear error otherwise', () => {
    expect(parseWorkerFlags({ ...defaults, maxConcurrency: '1024' }).maxConcurrency).toBe(1024);
    expect(parseWorkerFlags({ ...defaults, maxConcurrency: '32' }).maxConcurrency).toBe(32);
    expect(() => parseWorkerFlags({ ...defaults, maxConcurrency: '16' })).toThrow(
      /--max-concurrency must be an integer >= --concurrency \(32\), got "16"/,
    );
    expect(() => parseWorkerFlags({ ...defaults, maxConcurrency: 'lots' })).toThrow(ConfigError);
  });

  it('takes the defaults as before: bare numbers are milliseconds', () => {
    expect(parseWorkerFlags(defaults)).toEqual({
      concurrency: 32,
      maxConcurrency: undefined,
      quiet: false,
      lockDurationMs: 30_000,
      stalledIntervalMs: 15_000,
      livenessTimeoutMs: 10_000,
      metricsPort: undefined,
      schedules: true,
      processes: undefined,
      giveUpAfterMs: undefined,
      drainTimeoutMs: undefined,
    });
  });

  it("accepts the project's duration syntax for the lock, the stalled check and the liveness timeout", () => {
    const f = parseWorkerFlags({
      ...defaults,
      lockDuration: '45s',
      stalledInterval: '500ms',
      livenessTimeout: '1m',
      giveUpAfter: '10s',
      drainTimeout: '2m',
      quiet: true,
      metricsPort: 'off',
      processes: 'auto',
    });
    expect(f).toMatchObject({
      lockDurationMs: 45_000,
      stalledIntervalMs: 500,
      livenessTimeoutMs: 60_000,
      giveUpAfterMs: 10_000,
      drainTimeoutMs: 120_000,
      quiet: true,
      metricsPort: 'off',
      processes: 'auto',
    });
    expect(parseWorkerFlags({ ...defaults, livenessTimeout: '0' }).livenessTimeoutMs).toBe(0);
    expect(parseWorkerFlags({ ...defaults, livenessTimeout: '0s' }).livenessTimeoutMs).toBe(0);
  });

  it('refuses each bad value with a ConfigError naming the flag, the rule and the value', () => {
    const cases: [Partial<WorkerFlagValues>, string][] = [
      [{ lockDuration: '999' }, '--lock-duration must be a duration >= 1000 ms'],
      [{ lockDuration: '0.5s' }, '--lock-duration must be a duration >= 1000 ms'],
      [
        { lockDuration: 'soon' },
        '--lock-duration must be a duration like 500ms, 30s, 2m, 1h or 1d, got "soon"',
      ],
      [{ stalledInterval: '499ms' }, '--stalled-interval must be a duration >= 500 ms'],
      [{ livenessTimeout: '100' }, '--liveness-timeout must be 0 (off) or a duration >= 500 ms'],
      [{ concurrency: '0' }, '--concurrency must be a positive integer, got "0"'],
      [{ concurrency: '2.5' }, '--concurrency must be a positive integer'],
      [{ giveUpAfter: '0s' }, '--give-up-after must be a positive duration'],
      [{ drainTimeout: 'later' }, '--drain-timeout must be a duration'],
    ];
    for (const [values, message] of cases) {
      const run = () => parseWorkerFlags({ ...defaults, ...values });
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(message);
    }
    expect(() => parseWorkerFlags({ ...defaults, lockDuration: '999' })).toThrow('got "999"');
  });
});

describe('childArgv', () => {
  it('drops --processes and --metrics-port (both forms) and keeps everything else in order', () => {
    expect(
      childArgv([
        'worker',
        '--processes',
        '4',
        '--concurrency',
        '8',
        '--metrics-port=9000',
        '--processes=2',
        '--quiet',
      ]),
    ).toEqual(['worker', '--concurrency', '8', '--quiet']);
    expect(childArgv(['worker', '--metrics-port', '9464', '--lock-duration', '30s'])).toEqual([
      'worker',
      '--lock-duration',
      '30s',
    ]);
  });
});
