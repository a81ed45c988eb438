/** Test ids for the dedup benchmarks. */
import { randomBytes } from 'node:crypto';

/**
 * ObjectIds as MongoDB makes them: creation seconds, one 5-byte part per app-server process (three here, as the
 * simulator does), a per-process counter from a random start. `perSecond` ids are created each second.
 */
export function objectIds(count: number, perSecond: number, startSeconds: number): string[] {
  const processes = [0, 1, 2].map(() => ({ part: randomBytes(5), counter: randomBytes(3).readUIntBE(0, 3) }));
  const ids: string[] = [];
  const b = Buffer.alloc(12);
  for (let i = 0; i < count; i++) {
    const p = processes[i % 3]!;
    b.writeUInt32BE(startSeconds + Math.floor(i / perSecond), 0);
    p.part.copy(b, 4);
    p.counter = (p.counter + 1) % 2 ** 24;
    b.writeUIntBE(p.counter, 9, 3);
    ids.push(b.toString('hex'));
  }
  return ids;
}
