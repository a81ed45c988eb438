import { describe, expect, it } from 'vitest';
import { logRegistration } from '../../../../src/pipeline/queue/log-registration.js';

describe('logRegistration', () => {
  it('a lone run at debug; a run that overlaps others at info, naming them', () => {
    const lines: [string, string][] = [];
    const log = {
      info: (_: object, msg: string) => void lines.push(['info', msg]),
      debug: (_: object, msg: string) => void lines.push(['debug', msg]),
    };
    logRegistration(
      [
        { resource: 'transactions', lone: true, overlapping: [] },
        { resource: 'donations', lone: false, overlapping: ['r0', 'r9'] },
      ],
      'r1',
      log as never,
    );
    expect(lines).toEqual([
      ['debug', "run r1 is alone on transactions's range: its pages claim by mark"],
      [
        'info',
        'run r1 overlaps r0, r9 on donations: its pages take locks, once the pages those runs claimed by mark have settled',
      ],
    ]);
  });
});
