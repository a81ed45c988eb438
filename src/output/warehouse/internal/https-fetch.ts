/**
 * A `fetch` over node:https that trusts a given CA (the global fetch has no such option without undici's own
 * dispatcher, which is no dependency of this package). Enough for the Connect REST client: method, headers, a
 * string body, an abort signal; the answer as a `Response`.
 */
import { request } from 'node:https';

/** A fetch whose https:// requests trust only `ca` (PEM); other URLs go to `fallback`. */
export function fetchTrusting(ca: string, fallback: typeof fetch = globalThis.fetch): typeof fetch {
  return (input: string | URL | Request, init: RequestInit = {}) => {
    const url = input instanceof Request ? input.url : input.toString();
    if (!url.startsWith('https:')) return fallback(input, init);
    return new Promise<Response>((resolve, reject) => {
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const req = request(
        url,
        { method: init.method ?? 'GET', headers, ca, signal: init.signal ?? undefined },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(body, { status }));
          });
        },
      );
      req.on('error', reject);
      req.end(typeof init.body === 'string' ? init.body : undefined);
    });
  };
}
