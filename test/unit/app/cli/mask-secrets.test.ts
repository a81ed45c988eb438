import { describe, expect, it } from 'vitest';
import { maskSecrets, secretValues } from '../../../../src/app/cli/mask-secrets.js';

describe('maskSecrets', () => {
  const env = {
    GAMEDATA_API_KEY: 'sk-live-0123456789',
    REDIS_URL: 'redis://:r3dis-pass@127.0.0.1:6379',
    WAREHOUSE_URL: 'postgresql://gamedata:gamedata@127.0.0.1:5432/gamedata',
  };
  const secrets = secretValues(env);

  it('masks the API key anywhere, URL passwords inside URLs only', () => {
    expect(maskSecrets('gamedata: UpstreamError: key sk-live-0123456789 refused', secrets)).toBe(
      'gamedata: UpstreamError: key [REDACTED] refused',
    );
    expect(maskSecrets('cannot reach redis://:r3dis-pass@127.0.0.1:6379', secrets)).toBe(
      'cannot reach redis://:[REDACTED]@127.0.0.1:6379',
    );
    // "gamedata" is the warehouse password and an ordinary word: only the URL's copy is masked.
    expect(maskSecrets('gamedata: postgresql://gamedata:gamedata@h/gamedata', secrets)).toBe(
      'gamedata: postgresql://gamedata:[REDACTED]@h/gamedata',
    );
  });

  it('keeps values under 4 characters apart: masked only where they stand whole', () => {
    const short = secretValues({ GAMEDATA_API_KEY: 'abc' });
    expect(short.values).toEqual([]);
    expect(short.short).toEqual(['abc']);
    expect(maskSecrets('x-api-key: abc; abcd', short)).toBe('x-api-key: [REDACTED]; abcd');
  });
});
