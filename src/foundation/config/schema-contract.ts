/**
 * Schema contracts per resource (`GAMEDATA_SCHEMA_CONTRACT`, e.g. `transactions=freeze,articles=discard`): what the
 * encoder does with a field the catalogue does not know, after counting it as drift.
 * - `freeze` (the default, and the behaviour before contracts): keep it in `_extra` at its level, and alert;
 * - `discard`: drop it (it is counted, then not written);
 * - `evolve`: register it as an optional field of the subject when seen with one consistent scalar type (after the
 *   registry's compatibility check), then write it as a real field (`publish/schema-evolution.ts`); until then, and
 *   for what cannot evolve, as `freeze`.
 */
import { ConfigError } from '../errors/index.js';
import { RESOURCES } from '../models/resources.js';
import type { ResourceName } from '../models/resources.js';

export type SchemaContract = 'freeze' | 'discard' | 'evolve';

export const SCHEMA_CONTRACTS: readonly SchemaContract[] = ['freeze', 'discard', 'evolve'];

/** The contract of every resource. */
export type SchemaContracts = Readonly<Record<ResourceName, SchemaContract>>;

/** Every resource on `freeze`. */
export const DEFAULT_SCHEMA_CONTRACTS: SchemaContracts = Object.fromEntries(
  RESOURCES.map((r) => [r, 'freeze']),
) as Record<ResourceName, SchemaContract>;

/**
 * Parses `resource=contract,...` (blank = every resource on `freeze`; resources not named stay on `freeze`).
 * @throws ConfigError naming the rule and the entry at fault (`loadConfig` adds the setting and the value).
 * @example parseSchemaContracts('transactions=freeze,articles=discard')
 */
export function parseSchemaContracts(text: string): SchemaContracts {
  const out: Record<ResourceName, SchemaContract> = { ...DEFAULT_SCHEMA_CONTRACTS };
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const [resource, contract, ...rest] = part.split('=').map((s) => s.trim());
    const rule = `each entry is <resource>=<contract> with resource one of ${RESOURCES.join(', ')} and contract one of ${SCHEMA_CONTRACTS.join(', ')}`;
    if (resource === undefined || contract === undefined || rest.length > 0)
      throw new ConfigError(`${rule} (entry ${JSON.stringify(part)})`);
    if (!(RESOURCES as readonly string[]).includes(resource))
      throw new ConfigError(`unknown resource ${JSON.stringify(resource)}: ${rule}`);
    if (!(SCHEMA_CONTRACTS as readonly string[]).includes(contract))
      throw new ConfigError(`unknown contract ${JSON.stringify(contract)} for ${resource}: ${rule}`);
    if (seen.has(resource)) throw new ConfigError(`${resource} is given twice: ${rule}`);
    seen.add(resource);
    out[resource as ResourceName] = contract as SchemaContract;
  }
  return out;
}
