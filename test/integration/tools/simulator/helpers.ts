/** Raw-HTTP helpers of the simulator integration tests (no client library: the wire itself is under test). */
import type { Simulator } from '../../../../tools/simulator/index.js';

export type Rec = Record<string, unknown>;
export const NOW = Date.parse('2026-11-01T00:00:00.000Z');
export const H72 = 72 * 3_600_000;
export const KEY = 'test-key';

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** `apiKey`: the X-API-Key header (`null` sends none). */

/** A single call: `GET {url}/{procedure}?input=<json>`. */
export async function get(
  sim: Simulator,
  procedure: string,
  input?: unknown,
  apiKey: string | null = KEY,
): Promise<Answer> {
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return answer(
    await fetch(`${sim.url}/${procedure}${query}`, {
      headers: apiKey === null ? {} : { 'x-api-key': apiKey },
    }),
  );
}

/** A batch: `POST {url}/{p0},{p1}?batch=1` with body `{"0":...,"1":...}`. */
export async function batch(
  sim: Simulator,
  calls: Array<[string, unknown]>,
  apiKey: string | null = KEY,
): Promise<Answer> {
  const body = Object.fromEntries(calls.map(([, input], i) => [String(i), input]));
  return answer(
    await fetch(`${sim.url}/${calls.map(([p]) => p).join(',')}?batch=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey === null ? {} : { 'x-api-key': apiKey }) },
      body: JSON.stringify(body),
    }),
  );
}

export interface Page {
  items: Rec[];
  nextCursor?: string;
  hasMore?: boolean;
}

/** The data of a successful single call (throws with the body otherwise). */
export async function data<T = Page>(
  sim: Simulator,
  procedure: string,
  input?: unknown,
  apiKey: string | null = KEY,
): Promise<T> {
  const a = await get(sim, procedure, input, apiKey);
  if (a.status !== 200) throw new Error(`${procedure} -> ${a.status}: ${a.text.slice(0, 300)}`);
  return (a.body as { result: { data: T } }).result.data;
}

/**
 * Walks a listing through nextCursor until an empty page (upstream may send a cursor with an empty page), with
 * at most 50 pages per POST when `parallel` is off. Returns the items and the number of pages read.
 */
export async function walk(
  sim: Simulator,
  procedure: string,
  input: Rec,
  options: {
    limit?: number;
    cursor?: string;
    maxPages?: number;
    stopBelowMs?: number;
    sortField?: string;
  } = {},
): Promise<{ items: Rec[]; pages: number; cursors: string[] }> {
  const items: Rec[] = [];
  const cursors: string[] = [];
  let cursor = options.cursor;
  let pages = 0;
  for (;;) {
    const page = await data(sim, procedure, {
      ...input,
      limit: options.limit ?? 100,
      ...(cursor === undefined ? {} : { cursor }),
    });
    pages++;
    if (page.items.length === 0) return { items, pages, cursors };
    for (const item of page.items) {
      if (
        options.stopBelowMs !== undefined &&
        Date.parse(String(item[options.sortField ?? 'createdAt'])) < options.stopBelowMs
      )
        return { items, pages, cursors };
      items.push(item);
    }
    if (page.nextCursor === undefined) return { items, pages, cursors };
    cursors.push(page.nextCursor);
    cursor = page.nextCursor;
    if (options.maxPages !== undefined && pages >= options.maxPages) return { items, pages, cursors };
  }
}

export const ids = (records: readonly Rec[]): string[] => records.map((r) => String(r['_id']));
