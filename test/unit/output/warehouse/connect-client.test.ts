import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/foundation/errors/index.js';
import { DEFAULT_RETRY_POLICY } from '../../../../src/foundation/retry/index.js';
import { createConnectClient, createSinkConnectors } from '../../../../src/output/warehouse/index.js';

interface Call {
  method: string;
  url: string;
  body?: unknown;
}

/** A recording fake of the Connect REST API: answers from a queue per "METHOD path", records every call. */
function fakeConnect(answers: Record<string, Array<[number, unknown]>>) {
  const calls: Call[] = [];
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : input.toString();
    const method = init?.method ?? 'GET';
    calls.push({
      method,
      url,
      ...(typeof init?.body === 'string' ? { body: JSON.parse(init.body) as unknown } : {}),
    });
    const key = `${method} ${new URL(url).pathname}`;
    const queue = answers[key];
    const [status, body] = (queue && queue.length > 1 ? queue.shift() : queue?.[0]) ?? [
      404,
      { message: 'no route' },
    ];
    return Promise.resolve(new Response(body === undefined ? null : JSON.stringify(body), { status }));
  }) as typeof globalThis.fetch;
  return { calls, fetch };
}

const fastRetry = { ...DEFAULT_RETRY_POLICY, retries: 2, initialMs: 1, maxMs: 1 };

describe('createConnectClient', () => {
  it('PUTs the whole config; 201 = created, 200 = updated', async () => {
    const fake = fakeConnect({
      'PUT /connectors/a.b/config': [
        [201, {}],
        [200, {}],
      ],
    });
    const client = createConnectClient({ url: 'http://connect:8083/', fetch: fake.fetch, retry: fastRetry });
    expect(await client.putConnector('a.b', { x: '1' })).toEqual({ created: true });
    expect(await client.putConnector('a.b', { x: '1' })).toEqual({ created: false });
    expect(fake.calls).toEqual([
      { method: 'PUT', url: 'http://connect:8083/connectors/a.b/config', body: { x: '1' } },
      { method: 'PUT', url: 'http://connect:8083/connectors/a.b/config', body: { x: '1' } },
    ]);
  });

  it('retries 409 (rebalance in progress), then succeeds', async () => {
    const fake = fakeConnect({
      'PUT /connectors/c/config': [
        [409, { message: 'rebalance' }],
        [201, {}],
      ],
    });
    const client = createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry });
    expect(await client.putConnector('c', {})).toEqual({ created: true });
    expect(fake.calls).toHaveLength(2);
  });

  it("throws one ServiceError with Connect's message for a 400, without retrying", async () => {
    const fake = fakeConnect({
      'PUT /connectors/c/config': [[400, { message: 'Connector config is invalid' }]],
    });
    const client = createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry });
    const error = await client.putConnector('c', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).message).toMatch(/answered 400: Connector config is invalid/);
    expect(fake.calls).toHaveLength(1);
  });

  it('status and delete: 404 means none', async () => {
    const fake = fakeConnect({
      'GET /connectors/x/status': [[404, { message: 'not found' }]],
      'DELETE /connectors/x': [[404, { message: 'not found' }]],
      'DELETE /connectors/y': [[204, undefined]],
    });
    const client = createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry });
    expect(await client.connectorStatus('x')).toBeUndefined();
    expect(await client.deleteConnector('x')).toBe(false);
    expect(await client.deleteConnector('y')).toBe(true);
  });

  it('lists connectors with state, tasks and config, sorted by name', async () => {
    const entry = (name: string, state: string) => ({
      status: { name, connector: { state }, tasks: [{ id: 0, state }] },
      info: { config: { topics: `${name}.t` } },
    });
    const fake = fakeConnect({
      'GET /connectors': [[200, { b: entry('b', 'FAILED'), a: entry('a', 'RUNNING') }]],
    });
    const client = createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry });
    expect(await client.listConnectors()).toEqual([
      { name: 'a', state: 'RUNNING', tasks: [{ id: 0, state: 'RUNNING' }], config: { topics: 'a.t' } },
      { name: 'b', state: 'FAILED', tasks: [{ id: 0, state: 'FAILED' }], config: { topics: 'b.t' } },
    ]);
  });
});

describe('createSinkConnectors', () => {
  const plugins: [number, unknown] = [
    200,
    [
      { class: 'io.debezium.connector.jdbc.JdbcSinkConnector' },
      { class: 'gamedata.connect.ArraysOfRecordsToJson$Value' },
    ],
  ];

  it('creates the schema once, then one connector per resource (Connect sees CONNECT_WAREHOUSE_URL)', async () => {
    const fake = fakeConnect({
      'GET /connector-plugins': [plugins],
      'PUT /connectors/gd.users.postgres-sink/config': [[201, {}]],
      'PUT /connectors/gd.parties.postgres-sink/config': [[200, {}]],
    });
    const schemas: string[] = [];
    const result = await createSinkConnectors({
      connect: createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry }),
      resources: ['users', 'parties'],
      topicPrefix: 'gd',
      warehouseUrl: 'postgresql://u:p@127.0.0.1:15432/wh',
      connectWarehouseUrl: 'postgresql://u:p@postgres:5432/wh',
      ensureSchema: (url, schema) => {
        schemas.push(`${url} ${schema}`);
        return Promise.resolve();
      },
    });
    expect(schemas).toEqual(['postgresql://u:p@127.0.0.1:15432/wh gd']);
    expect(result).toEqual([
      {
        resource: 'users',
        name: 'gd.users.postgres-sink',
        created: true,
        table: 'gd.users',
        inlineSecrets: ['connection.password'],
      },
      {
        resource: 'parties',
        name: 'gd.parties.postgres-sink',
        created: false,
        table: 'gd.parties',
        inlineSecrets: ['connection.password'],
      },
    ]);
    const put = fake.calls.find((c) => c.method === 'PUT');
    expect((put?.body as Record<string, string>)['connection.url']).toBe(
      'jdbc:postgresql://postgres:5432/wh',
    );
  });

  it('refuses a worker without the plugins, before touching the database or Connect', async () => {
    const fake = fakeConnect({
      'GET /connector-plugins': [[200, [{ class: 'io.debezium.connector.jdbc.JdbcSinkConnector' }]]],
    });
    let touched = false;
    const error = await createSinkConnectors({
      connect: createConnectClient({ url: 'http://connect', fetch: fake.fetch, retry: fastRetry }),
      resources: ['users'],
      topicPrefix: 'gd',
      warehouseUrl: 'postgresql://u:p@h/wh',
      ensureSchema: () => {
        touched = true;
        return Promise.resolve();
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as Error).message).toMatch(/lacks gamedata\.connect\.ArraysOfRecordsToJson\$Value/);
    expect(touched).toBe(false);
    expect(fake.calls.filter((c) => c.method === 'PUT')).toEqual([]);
  });
});
