import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SCHEMA_CONTRACTS,
  loadConfig,
  parseSchemaContracts,
} from '../../../../src/foundation/config/index.js';
import { ConfigError } from '../../../../src/foundation/errors/index.js';

describe('GAMEDATA_SCHEMA_CONTRACT', () => {
  it('defaults every resource to freeze, and sets the resources named', () => {
    expect(loadConfig({ env: {} }).schemaContracts).toEqual(DEFAULT_SCHEMA_CONTRACTS);
    expect(DEFAULT_SCHEMA_CONTRACTS.transactions).toBe('freeze');
    const c = loadConfig({
      env: { GAMEDATA_SCHEMA_CONTRACT: 'transactions=freeze, articles=discard' },
    }).schemaContracts;
    expect(c.articles).toBe('discard');
    expect(c.transactions).toBe('freeze');
    expect(c.users).toBe('freeze');
  });

  it.each([
    ['articles', 'each entry is <resource>=<contract>'],
    ['articles=drop', 'unknown contract "drop" for articles'],
    ['articles=evolves', 'unknown contract "evolves" for articles'],
    ['article=discard', 'unknown resource "article"'],
    ['users=freeze,users=discard', 'users is given twice'],
  ])('%s: one ConfigError line naming the setting, the rule and the value', (value, part) => {
    let error: unknown;
    try {
      loadConfig({ env: { GAMEDATA_SCHEMA_CONTRACT: value } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain('GAMEDATA_SCHEMA_CONTRACT (env): ');
    expect(message).toContain(part);
    expect(message).toContain(`got ${JSON.stringify(value)}`);
  });

  it('accepts evolve (issue 35)', () => {
    expect(
      loadConfig({ env: { GAMEDATA_SCHEMA_CONTRACT: 'donations=evolve' } }).schemaContracts.donations,
    ).toBe('evolve');
  });

  it('parses directly, blanks ignored', () => {
    expect(parseSchemaContracts(' , parties=discard ,').parties).toBe('discard');
    expect(() => parseSchemaContracts('a=b=c')).toThrow(ConfigError);
  });
});
