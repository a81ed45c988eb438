import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../src/foundation/errors/index.js';
import {
  DEFAULT_SIMULATOR_OPTIONS,
  REALISTIC_LATENCY,
  applyRuntimePatch,
  parseFaultSpec,
  parseLatencySpec,
  resolveSimulatorOptions,
} from '../../../../tools/simulator/index.js';

describe('simulator options', () => {
  it('documents the defaults in one object', () => {
    expect(DEFAULT_SIMULATOR_OPTIONS).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      seed: 1,
      scale: 'small',
      now: '2026-11-01T00:00:00.000Z',
      cursor: 'v2',
      hasMore: false,
      window72h: true,
      live: false,
      rateLimit: { enabled: true, keyed: 500, anonymous: 100, windowMs: 60_000 },
    });
    const resolved = resolveSimulatorOptions();
    expect(resolved.runtime.faults.http5xx).toBe(0);
    expect(resolved.runtime.latency.requestMs).toBe(0);
  });

  it('names the bad option, the rule and the value', () => {
    expect(() => resolveSimulatorOptions({ port: -1 })).toThrow(
      /option port must be an integer in 0\.\.65535, got -1/,
    );
    expect(() => resolveSimulatorOptions({ scale: 'huge' as 'small' })).toThrow(ConfigError);
    expect(() => resolveSimulatorOptions({ now: 'soon' })).toThrow(/option now/);
    expect(() => resolveSimulatorOptions({ faults: { http5xx: 2 } })).toThrow(/faults\.http5xx/);
    expect(() => resolveSimulatorOptions({ live: { ratePerSecond: -1 } })).toThrow(/live\.ratePerSecond/);
    expect(() => applyRuntimePatch(resolveSimulatorOptions().runtime, { rateLimit: { keyed: 0 } })).toThrow(
      /rateLimit\.keyed/,
    );
    expect(() => applyRuntimePatch(resolveSimulatorOptions().runtime, { apiKeys: [''] })).toThrow(/apiKeys/);
  });

  it('patches nested settings without losing the rest', () => {
    const base = resolveSimulatorOptions().runtime;
    const next = applyRuntimePatch(base, { rateLimit: { anonymous: 3 }, faults: { reset: 0.5 } });
    expect(next.rateLimit).toEqual({ ...base.rateLimit, anonymous: 3 });
    expect(next.faults).toEqual({ ...base.faults, reset: 0.5 });
    expect(base.faults.reset).toBe(0);
  });

  it('parses the CLI fault spec', () => {
    expect(
      parseFaultSpec('5xx=0.05,batch5xx=0.02,reset=0.01,hang=0.005,badjson=0.01,malformed=0.001,seed=7'),
    ).toEqual({
      http5xx: 0.05,
      batch5xx: 0.02,
      reset: 0.01,
      hang: 0.005,
      badJson: 0.01,
      malformed: 0.001,
      seed: 7,
    });
    expect(parseFaultSpec('')).toEqual({});
    expect(() => parseFaultSpec('explode=1')).toThrow(/unknown fault "explode"/);
    expect(() => parseFaultSpec('5xx=lots')).toThrow(/needs a number/);
    expect(() => parseFaultSpec('reset=1.5')).toThrow(/faults\.reset/);
  });

  it('parses the CLI latency spec', () => {
    expect(parseLatencySpec('realistic')).toEqual(REALISTIC_LATENCY);
    expect(parseLatencySpec('off').requestMs).toBe(0);
    expect(parseLatencySpec('request=600,feedPerHour=90')).toMatchObject({
      requestMs: 600,
      feedPerHourMs: 90,
      filteredMs: 0,
    });
    expect(() => parseLatencySpec('warp=1')).toThrow(/unknown key/);
    expect(() => parseLatencySpec('request=-1')).toThrow(/latency\.requestMs/);
  });
});
