/**
 * Whole-request faults of the simulator: a hang, a connection reset, a 502/503 from the proxy in front, a cut-off
 * JSON body (one draw per request from the seeded stream), and the slots of a batch that answer 5xx.
 */
import type http from 'node:http';
import type { Rng } from './internal/prng.js';
import type { FaultSettings } from './options.js';
import type { StatsRecorder } from './stats.js';

const BAD_GATEWAY =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n';
const UNAVAILABLE =
  '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>\n';

/**
 * Draws one whole-request fault and answers with it (a hang keeps the response in `hung`, unanswered until close).
 * @returns true when a fault took the request (the caller does nothing more), false when it goes on.
 */
export function applyRequestFault(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  f: FaultSettings,
  at: { isBatch: boolean; rng: Rng; stats: StatsRecorder; hung: Set<http.ServerResponse> },
): boolean {
  const { isBatch, rng, stats, hung } = at;
  const draw = rng.next();
  let edge = f.hang;
  if (draw < edge) {
    stats.fault('hang');
    hung.add(res); // accepted, never answered (until close())
    return true;
  }
  if (draw < (edge += f.reset)) {
    stats.fault('reset');
    req.socket.destroy();
    return true;
  }
  if (draw < (edge += f.http5xx)) {
    stats.fault('http5xx');
    const bad = rng.next() < 0.5;
    res.writeHead(bad ? 502 : 503, { 'content-type': 'text/html' }).end(bad ? BAD_GATEWAY : UNAVAILABLE);
    return true;
  }
  if (draw < (edge += f.badJson)) {
    stats.fault('badJson');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(isBatch ? '[{"result":{"data":{"items":[{"_id":"' : '{"result":{"data":{"items":[{"_id":"');
    return true;
  }
  if (draw < edge + f.oversize) {
    stats.fault('oversize');
    writeOversize(res, f.oversizeBytes);
    return true;
  }
  return false;
}

/** 200 with `bytes` of JSON whitespace (no content-length: the client must count), written in 64 KiB chunks. */
function writeOversize(res: http.ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = ' '.repeat(64 * 1024);
  let left = bytes;
  const more = (): void => {
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!res.write(n === chunk.length ? chunk : chunk.slice(0, n))) {
        res.once('drain', more);
        return;
      }
    }
    res.end('[');
  };
  // A client that stops reading (its cap) closes the socket: stop writing.
  res.once('close', () => (left = 0));
  more();
}

/** The slots of a batch (0-based) that answer 5xx, each drawn with probability `batch5xx`; counted in the stats. */
export function drawFailingSlots(
  batchSize: number,
  f: FaultSettings,
  rng: Rng,
  stats: StatsRecorder,
): Set<number> {
  const failingSlots = new Set<number>();
  if (f.batch5xx > 0) for (let i = 0; i < batchSize; i++) if (rng.next() < f.batch5xx) failingSlots.add(i);
  for (let i = 0; i < failingSlots.size; i++) stats.fault('batch5xx');
  return failingSlots;
}
