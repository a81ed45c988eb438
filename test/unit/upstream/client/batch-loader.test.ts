import { describe, expect, it } from 'vitest';
import { createBatchLoader } from '../../../../src/upstream/client/batch-loader.js';
import type { ProcedureCall, SlotResult, Transport } from '../../../../src/upstream/client/transport.js';
import {
  AbortedError,
  ConfigError,
  MissingResultError,
  UpstreamError,
} from '../../../../src/foundation/errors/index.js';

/** A recording fake transport: answers `echo:<input>` per slot, or what `answer` says. */
function recordingTransport(
  answer?: (calls: readonly ProcedureCall[]) => SlotResult[],
): Transport & { requests: ProcedureCall[][] } {
  const requests: ProcedureCall[][] = [];
  return {
    requests,
    async send(calls) {
      requests.push([...calls]);
      await new Promise((r) => setTimeout(r, 5));
      return answer
        ? answer(calls)
        : calls.map((c) => ({ ok: true, data: `echo:${JSON.stringify(c.input)}` }));
    },
  };
}

describe('batch loader', () => {
  it('merges calls of one tick into POSTs of at most 50, each caller getting its own result', async () => {
    const t = recordingTransport();
    const loader = createBatchLoader(t);
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => loader.load('user.getUserById', { userId: String(i) })),
    );
    expect(t.requests.map((r) => r.length)).toEqual([50, 50, 20]);
    results.forEach((r, i) => expect(r).toBe(`echo:{"userId":"${i}"}`));
  });

  it('refuses a batch size above the upstream limit of 50', () => {
    expect(() => createBatchLoader(recordingTransport(), { maxBatchSize: 51 })).toThrow(ConfigError);
  });

  it('shares identical calls in flight', async () => {
    const t = recordingTransport();
    const loader = createBatchLoader(t);
    const [a, b] = await Promise.all([loader.load('p', { x: 1 }), loader.load('p', { x: 1 })]);
    expect(a).toBe(b);
    expect(t.requests).toHaveLength(1);
    expect(t.requests[0]).toHaveLength(1);
  });

  it('rejects only the failing slot, and a missing slot with MissingResultError', async () => {
    const t = recordingTransport((calls) =>
      calls
        .slice(0, 2)
        .map((c, i) =>
          i === 1
            ? { ok: false, error: new UpstreamError('nope', 404, c.procedure, 'NOT_FOUND') }
            : { ok: true, data: 1 },
        ),
    );
    const loader = createBatchLoader(t);
    const settled = await Promise.allSettled([loader.load('p', 0), loader.load('p', 1), loader.load('p', 2)]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect(settled[1].status === 'rejected' && settled[1].reason).toBeInstanceOf(UpstreamError);
    expect(settled[2].status === 'rejected' && settled[2].reason).toBeInstanceOf(MissingResultError);
  });

  it('bounds HTTP requests in flight and fills later requests with calls made meanwhile', async () => {
    let inFlight = 0;
    let peak = 0;
    const t = recordingTransport();
    const base = t.send.bind(t);
    t.send = async (calls, signal) => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await base(calls, signal);
      } finally {
        inFlight--;
      }
    };
    const loader = createBatchLoader(t, { maxInFlight: 2 });
    await Promise.all(Array.from({ length: 400 }, (_, i) => loader.load('p', i)));
    expect(peak).toBe(2);
    expect(t.requests).toHaveLength(8);
  });

  it('an aborted caller rejects at once; the others still settle', async () => {
    const t = recordingTransport();
    const loader = createBatchLoader(t);
    const c = new AbortController();
    const a = loader.load('p', 'a', c.signal);
    const b = loader.load('p', 'b');
    c.abort();
    await expect(a).rejects.toBeInstanceOf(AbortedError);
    await expect(b).resolves.toBe('echo:"b"');
  });
});

describe('batch loader with a router (shared budget)', () => {
  /** A recording fake router: answers each call after `ms`, or fails it with `error`. */
  function recordingRouter(error?: Error): {
    routed: ProcedureCall[];
    signals: AbortSignal[];
    route: (call: ProcedureCall, signal: AbortSignal) => Promise<SlotResult>;
  } {
    const routed: ProcedureCall[] = [];
    const signals: AbortSignal[] = [];
    return {
      routed,
      signals,
      async route(call, signal) {
        routed.push(call);
        signals.push(signal);
        await new Promise((r) => setTimeout(r, 5));
        if (error) throw error;
        return { ok: true, data: `routed:${JSON.stringify(call.input)}` };
      },
    };
  }

  it('hands every distinct call to the router (never to the transport); identical calls share one', async () => {
    const t = recordingTransport();
    const router = recordingRouter();
    const loader = createBatchLoader(t, { router });
    const got = await Promise.all([
      loader.load('user.getUserById', { userId: 'a' }),
      loader.load('user.getUserById', { userId: 'a' }),
      loader.load('user.getUserById', { userId: 'b' }),
    ]);
    expect(got).toEqual(['routed:{"userId":"a"}', 'routed:{"userId":"a"}', 'routed:{"userId":"b"}']);
    expect(router.routed).toHaveLength(2);
    expect(t.requests).toHaveLength(0);
    expect(loader.pending()).toBe(0);
  });

  it('a router failure rejects every waiter of the call; a waiter that aborts alone aborts the routed call', async () => {
    const failing = createBatchLoader(recordingTransport(), {
      router: recordingRouter(new UpstreamError('boom', 502, undefined, undefined)),
    });
    await expect(failing.load('p', { x: 1 })).rejects.toThrow('boom');
    const router = recordingRouter();
    const loader = createBatchLoader(recordingTransport(), { router });
    const controller = new AbortController();
    const p = loader.load('p', { x: 2 }, controller.signal);
    controller.abort();
    await expect(p).rejects.toBeInstanceOf(AbortedError);
    expect(router.signals[0]?.aborted).toBe(true);
  });
});
