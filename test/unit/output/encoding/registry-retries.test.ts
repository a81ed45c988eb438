// withRegistryRetries: retriable registry failures (no answer, timeout, 5xx) are retried; 4xx, non-registry errors
// and deletes are not; the caller gets the library's own error of the last attempt. A recording fake client.
import type { Client } from '@confluentinc/schemaregistry';
import { describe, expect, it } from 'vitest';
import { resolveRetryPolicy } from '../../../../src/foundation/retry/index.js';
import { withRegistryRetries } from '../../../../src/output/encoding/registry-client.js';

const timeout = Object.assign(new Error('timeout of 10000ms exceeded'), {
  isAxiosError: true,
  code: 'ECONNABORTED',
});
const notFound = Object.assign(new Error('Schema not found'), {
  isAxiosError: true,
  response: { status: 404 },
});
const unavailable = Object.assign(new Error('unavailable'), {
  isAxiosError: true,
  response: { status: 503 },
});

/** A fake whose methods throw `failures` in turn, then answer; `calls` counts calls per method. */
function fake(failures: Error[]): { client: Client; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const step = (name: string) => (): Promise<string> => {
    calls[name] = (calls[name] ?? 0) + 1;
    const failure = failures.shift();
    return failure === undefined ? Promise.resolve(`${name} ok`) : Promise.reject(failure);
  };
  const client = {
    getBySubjectAndId: step('getBySubjectAndId'),
    deleteSubject: step('deleteSubject'),
    config: () => ({ baseURLs: ['http://registry'] }),
  } as unknown as Client;
  return { client, calls };
}

const policy = resolveRetryPolicy({ retries: 2, initialMs: 0, maxMs: 0 });

describe('withRegistryRetries', () => {
  it('retries timeouts and 5xx until an attempt answers', async () => {
    const { client, calls } = fake([timeout, unavailable]);
    const wrapped = withRegistryRetries(client, 'http://registry', policy);
    await expect(wrapped.getBySubjectAndId('s-value', 1)).resolves.toBe('getBySubjectAndId ok');
    expect(calls).toEqual({ getBySubjectAndId: 3 });
  });

  it("gives up after maxAttempts with the last attempt's own error", async () => {
    const { client, calls } = fake([timeout, timeout, unavailable, timeout]);
    const wrapped = withRegistryRetries(client, 'http://registry', policy);
    await expect(wrapped.getBySubjectAndId('s-value', 1)).rejects.toBe(unavailable);
    expect(calls).toEqual({ getBySubjectAndId: 3 });
  });

  it("does not retry a 4xx, an error that is not the registry's, or a delete", async () => {
    const bug = new TypeError('not a registry failure');
    const { client, calls } = fake([notFound, bug, timeout]);
    const wrapped = withRegistryRetries(client, 'http://registry', policy);
    await expect(wrapped.getBySubjectAndId('s-value', 1)).rejects.toBe(notFound);
    await expect(wrapped.getBySubjectAndId('s-value', 1)).rejects.toBe(bug);
    await expect(wrapped.deleteSubject('s-value', false)).rejects.toBe(timeout);
    expect(calls).toEqual({ getBySubjectAndId: 2, deleteSubject: 1 });
    expect(wrapped.config().baseURLs).toEqual(['http://registry']);
  });
});
