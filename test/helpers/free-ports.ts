/**
 * Free loopback ports for services a test starts. Ports asked for together are distinct: each is held open until all
 * are picked (asked one after another and released at once, the kernel may hand the same port out twice: a secure
 * stack's MTLS and controller listeners once got the same one, and Kafka refused to start, 2026-11-28).
 */
import { createServer, type Server } from 'node:net';

/** `n` distinct free loopback ports (listened on together, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i += 1) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}

/** One free loopback port. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port as number;
}
