/**
 * `status` reads the workers' /metrics at addresses it finds in Redis (issue 34, item 5): only loopback (or the hosts
 * given) and only `http://host:port/metrics` are fetched, so whoever writes a heartbeat cannot make `status` call any
 * other address.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isScrapeAllowed, scrapeMetrics } from '../../../../src/app/status/index.js';

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s !== undefined) await new Promise((r) => s.close(r));
});

describe('status scrapes', () => {
  it('allows loopback /metrics only, unless other hosts are given', () => {
    expect(isScrapeAllowed('http://127.0.0.1:9464/metrics')).toBe(true);
    expect(isScrapeAllowed('http://127.0.0.2:9464/metrics')).toBe(true);
    expect(isScrapeAllowed('http://[::1]:9464/metrics')).toBe(true);
    expect(isScrapeAllowed('http://169.254.169.254/latest/meta-data')).toBe(false);
    expect(isScrapeAllowed('http://169.254.169.254:80/metrics')).toBe(false);
    expect(isScrapeAllowed('http://127.0.0.1:9464/admin')).toBe(false);
    expect(isScrapeAllowed('file:///etc/passwd')).toBe(false);
    expect(isScrapeAllowed('http://u:p@127.0.0.1:9464/metrics')).toBe(false);
    expect(isScrapeAllowed('http://10.0.0.5:9464/metrics')).toBe(false);
    expect(isScrapeAllowed('http://10.0.0.5:9464/metrics', ['10.0.0.5'])).toBe(true);
    expect(isScrapeAllowed('http://127.0.0.1:9464/metrics', ['10.0.0.5'])).toBe(false);
  });

  it('does not fetch a refused URL (it is listed as unreachable)', async () => {
    const paths: string[] = [];
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.end('gamedata_pages_total 3\n');
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const good = `http://127.0.0.1:${port}/metrics`;
    const bad = `http://127.0.0.1:${port}/secret-admin`;
    const result = await scrapeMetrics([good, bad]);
    expect(result.scraped).toBe(1);
    expect(result.sums.get('gamedata_pages_total')).toBe(3);
    expect(result.unreachable).toEqual([bad]);
    expect(paths).toEqual(['/metrics']);
  });
});
