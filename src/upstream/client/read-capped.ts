/**
 * Reads an HTTP answer's body as text, at most `maxBytes` of it (issue 48, item 4): one huge answer must not exhaust
 * the fetcher that serves the whole key. A `content-length` over the cap is refused before reading; a body that grows
 * over it is cut off (the stream cancelled) the moment it does.
 */
import { UpstreamError } from '../../foundation/errors/index.js';

/**
 * The body of `response` as UTF-8 text.
 * @throws UpstreamError (retriable: another answer may be well-sized) naming the cap, once the body is over it.
 */
export async function readCapped(response: Response, maxBytes: number, what: string): Promise<string> {
  const tooLarge = (bytes: string): UpstreamError =>
    new UpstreamError(
      `${what}: answer of ${bytes} bytes is over the cap of ${maxBytes} (maxResponseBytes, GAMEDATA_MAX_RESPONSE_BYTES)`,
      response.status,
      undefined,
      undefined,
      { retriable: true },
    );
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(String(declared));
  }
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${maxBytes}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
