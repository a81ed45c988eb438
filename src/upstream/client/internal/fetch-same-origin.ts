/**
 * Redirects followed only within the API's origin. fetch's own `redirect: 'follow'` drops `Authorization` on a
 * cross-origin redirect but forwards every other header: the `x-api-key` would go to whatever host a redirect names,
 * even from https:// to http://. Here a redirect to the same origin (scheme, host and port) is followed (at most
 * {@link MAX_REDIRECTS}); any other is not: its 3xx answer is returned as it is, and the caller fails on it.
 */

/** Redirects followed in a row before the last 3xx answer is returned. */
export const MAX_REDIRECTS = 5;

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** `fetch(url, init)`, following same-origin redirects only (the headers, the API key among them, stay home). */
export async function fetchSameOrigin(fetch: FetchLike, url: string, init: RequestInit): Promise<Response> {
  let current = url;
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(current, request);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null || hop >= MAX_REDIRECTS)
      return response;
    const next = new URL(location, current);
    if (next.origin !== new URL(current).origin) return response;
    await response.body?.cancel();
    current = next.toString();
    // 303, and 301/302 after a POST, become a GET without a body (as fetch does); 307/308 keep both
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && request.method === 'POST')
    ) {
      const { body: _body, ...rest } = request;
      request = { ...rest, method: 'GET' };
    }
  }
}
