/** `gamedata simulate` serves until SIGTERM and prints its URL; `simulate truth` prints the same truth as the API. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorld } from '../../../../tools/simulator/index.js';
import { serveOptions } from '../../../../tools/simulator/cli/simulate-command.js';

const TSX = 'node_modules/.bin/tsx';
const children: Array<ReturnType<typeof spawn>> = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('gamedata simulate', () => {
  it('serve prints the base URL, answers, and stops on SIGTERM', async () => {
    const child = spawn(
      TSX,
      ['src/app/cli/main.ts', 'simulate', '--port', '0', '--seed', '3', '--cursor', 'v1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const line = out.split('\n')[0];
        if (out.includes('\n') && line !== undefined) resolve(line.trim());
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/trpc$/);
    const r = await fetch(
      `${url}/transaction.getPaginatedTransactions?input=${encodeURIComponent('{"limit":1}')}`,
      {
        headers: { 'x-api-key': 'k' },
      },
    );
    const body = (await r.json()) as { result: { data: { nextCursor: string } } };
    expect(body.result.data.nextCursor).toMatch(/GMT\+0000 \(Coordinated Universal Time\)\|/); // --cursor v1
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('truth prints NDJSON equal to the world truth; bad arguments fail clearly', async () => {
    const run = async (args: string[]): Promise<{ code: number | null; out: string; err: string }> => {
      const child = spawn(TSX, ['src/app/cli/main.ts', 'simulate', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, out, err };
    };
    const ok = await run(['truth', 'parties', '--seed', '4']);
    expect(ok.code).toBe(0);
    const lines = ok.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual(createWorld({ seed: 4 }).truth('parties'));
    const bad = await run(['truth', 'planets']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/unknown resource "planets"/);
  });

  it('maps serve flags to simulator options', () => {
    const options = serveOptions({
      seed: 2,
      scale: 'small',
      now: '2026-01-01T00:00:00.000Z',
      extraFields: true,
      port: 0,
      host: '127.0.0.1',
      cursor: 'v2',
      live: 20,
      faults: '5xx=0.1,seed=3',
      latency: 'realistic',
      rateLimit: false,
      window: false,
      apiKeys: 'a, b',
    });
    expect(options).toMatchObject({
      seed: 2,
      live: { ratePerSecond: 20, changeRatePerSecond: 1, speed: 1 },
      faults: { http5xx: 0.1, seed: 3 },
      latency: { requestMs: 600 },
      rateLimit: { enabled: false },
      window72h: false,
      apiKeys: ['a', 'b'],
    });
  });
});
