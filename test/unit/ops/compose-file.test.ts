/**
 * docker-compose.yml is valid against the Compose Specification's schema (what `docker compose config` checks first;
 * no engine or compose plugin runs here), and its worker and simulator run the image built from the Dockerfile,
 * not the checkout.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const schema = JSON.parse(
  readFileSync(`${ROOT}test/fixtures/compose-spec/compose-spec.json`, 'utf8'),
) as Record<string, unknown>;

interface ComposeService {
  build?: string | { context?: string; dockerfile?: string; target?: string };
  image?: string;
  volumes?: unknown[];
  command?: string[];
  healthcheck?: { test?: string[] };
  stop_grace_period?: string;
}

function validate(doc: unknown): string[] {
  // The schema is draft-07 (ajv's default) plus annotations ajv does not know (`deprecated`): not strict. Its
  // `$schema` names draft-07 by an https URL ajv does not have under that key, hence left out.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const { $schema: _draft, ...body } = schema;
  const check = ajv.compile(body);
  return check(doc) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

describe('docker-compose.yml', () => {
  const doc = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };

  it('is valid against the Compose Specification schema', () => {
    expect(validate(doc)).toEqual([]);
  });

  it('the schema check can fail', () => {
    expect(
      validate({ services: { worker: { image: 'x', stop_grace_period: 60, bogus: true } } }),
    ).not.toEqual([]);
  });

  it('runs the worker from the image and the simulator from its own stage, without the checkout mounted', () => {
    const worker = doc.services['worker'] ?? {};
    expect({ build: worker.build, image: worker.image }).toEqual({
      build: { context: '.', dockerfile: 'Dockerfile' },
      image: 'gamedata-pipeline:local',
    });
    // the simulator is a tool of the repository: the Dockerfile's `simulator` stage, not the package's image
    const simulator = doc.services['simulator'] ?? {};
    expect({ build: simulator.build, image: simulator.image }).toEqual({
      build: { context: '.', dockerfile: 'Dockerfile', target: 'simulator' },
      image: 'gamedata-simulator:local',
    });
    expect(readFileSync(`${ROOT}Dockerfile`, 'utf8')).toMatch(/^FROM build AS simulator$/m);
    for (const [name, s] of [
      ['worker', worker],
      ['simulator', simulator],
    ] as const) {
      expect({ name, volumes: s.volumes }).toEqual({ name, volumes: undefined });
      expect(s.command?.join(' ')).not.toMatch(/tsx|src\//);
    }
    expect(worker.command?.[0]).toBe('worker');
    expect(simulator.command?.slice(0, 2)).toEqual(['simulate', 'serve']);
  });
});
