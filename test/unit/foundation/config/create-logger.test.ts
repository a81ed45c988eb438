import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, registerSecret } from '../../../../src/foundation/config/index.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

/** A destination that keeps every line pino writes, parsed. */
function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>>; raw: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  return {
    stream,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes structured lines carrying the namespace', () => {
    const out = capture();
    const log = createLogger('sink', { destination: out.stream });
    log.info({ topic: 'gamedata.users', count: 3 }, 'published');
    const [line] = out.lines();
    expect(line).toMatchObject({
      name: 'sink',
      msg: 'published',
      topic: 'gamedata.users',
      count: 3,
      level: 30,
    });
  });

  it('honours the level', () => {
    const out = capture();
    const log = createLogger('jobs.worker', { destination: out.stream, level: 'warn' });
    log.info('hidden');
    log.warn('shown');
    expect(out.lines().map((line) => line['msg'])).toEqual(['shown']);
  });

  it('redacts secret fields at any of the known paths', () => {
    const out = capture();
    const log = createLogger('client', { destination: out.stream });
    log.info(
      { apiKey: 'k1-abcdef', options: { apiKey: 'k2-abcdef' }, headers: { 'x-api-key': 'k3-abcdef' } },
      'req',
    );
    const [line] = out.lines();
    expect(line?.['apiKey']).toBe('[REDACTED]');
    expect(line?.['options']).toEqual({ apiKey: '[REDACTED]' });
    expect(line?.['headers']).toEqual({ 'x-api-key': '[REDACTED]' });
    expect(out.raw()).not.toMatch(/k[123]-abcdef/);
  });

  it('masks a secret value wherever it appears, messages and errors included', () => {
    const out = capture();
    const log = createLogger('client', { destination: out.stream, secrets: ['sk-live-123456'] });
    log.error(
      { err: new Error('401 for key sk-live-123456'), url: 'http://x/?key=sk-live-123456' },
      'bad key sk-live-123456',
    );
    expect(out.raw()).not.toContain('sk-live-123456');
    expect(out.raw()).toContain('[REDACTED]');
    expect(out.lines()).toHaveLength(1);
  });

  it('masks secrets registered globally after the logger was made', () => {
    const out = capture();
    const log = createLogger('cli', { destination: out.stream });
    registerSecret('global-secret-value');
    registerSecret('abc'); // too short to mask safely: ignored
    log.info('using global-secret-value and abc');
    expect(out.lines()[0]?.['msg']).toBe('using [REDACTED] and abc');
  });

  it('rejects a bad name or level, naming the option', () => {
    expect(() => createLogger('Bad Name')).toThrow(ConfigError);
    expect(() => createLogger('ok', { level: 'loud' as never })).toThrow(/level must be one of/);
  });
  it("masks this process's API key (GAMEDATA_API_KEY) without anyone registering it", () => {
    const before = process.env['GAMEDATA_API_KEY'];
    process.env['GAMEDATA_API_KEY'] = 'sk-from-the-env-31337';
    try {
      const out = capture();
      const log = createLogger('client', { destination: out.stream });
      log.error({ url: 'http://x/trpc' }, 'upstream said: bad key sk-from-the-env-31337');
      expect(out.raw()).not.toContain('sk-from-the-env-31337');
      expect(out.lines()[0]?.['msg']).toBe('upstream said: bad key [REDACTED]');
    } finally {
      if (before === undefined) delete process.env['GAMEDATA_API_KEY'];
      else process.env['GAMEDATA_API_KEY'] = before;
    }
  });
});
