/**
 * Issue 48's bad pages (`FaultSettings.repeatCursor`, `emptyPages`, `missingCursor`, `longPages`): one draw per listing
 * page read that has rows below it, from the fault seed and a read counter (deterministic for one sequence of reads,
 * different on a retry), and what each does to the page as served.
 */
import { hash32, unit } from '../internal/prng.js';
import { encodeCursorV2 } from '../cursor.js';
import type { FaultSettings } from '../options.js';

/** The cursor repeated, an empty page with its cursor, no cursor, a row too many. */
export type BadPageKind = 'repeatCursor' | 'emptyPages' | 'missingCursor' | 'longPages';
const BAD_PAGE_KINDS: readonly BadPageKind[] = ['repeatCursor', 'emptyPages', 'missingCursor', 'longPages'];

/** The same v2 bound spelt another way (its JSON indented by 1-9 spaces, unlike `cursor`'s own spelling). */
function respell(cursor: string, salt: number): string {
  const parts: unknown = JSON.parse(Buffer.from(cursor.slice(3), 'base64url').toString('utf8'));
  for (let k = 0; k < 10; k++) {
    const text = `v2.${Buffer.from(JSON.stringify(parts, null, 1 + ((salt + k) % 9))).toString('base64url')}`;
    if (text !== cursor) return text;
  }
  return cursor;
}

export interface BadPages {
  /** The bad page drawn for a read whose first row has identity `ident` (undefined: none, or no rows below). */
  draw(faults: FaultSettings, cursorFormat: 'v2' | 'v1', ident: number | undefined): BadPageKind | undefined;
  /**
   * The `nextCursor` a page of kind `bad` carries instead of `next`: the cursor it was read at (`repeatCursor`),
   * another spelling of that bound (`emptyPages`: rows remain below it and none is skipped; the first page's is the
   * bound just above its first row), none (`missingCursor`).
   */
  nextCursor(
    bad: BadPageKind | undefined,
    next: string | undefined,
    readAt: string | undefined,
    first: { timeMs: number } | undefined,
  ): string | undefined;
}

export function createBadPages(): BadPages {
  let reads = 0;
  return {
    draw(f, cursorFormat, ident) {
      const total = f.repeatCursor + f.emptyPages + f.missingCursor + f.longPages;
      if (total <= 0 || ident === undefined) return undefined;
      const draw = unit(hash32(f.seed, ident, ++reads, 0x6270));
      let edge = 0;
      for (const kind of BAD_PAGE_KINDS) {
        if (draw < (edge += f[kind])) {
          // Respelling needs a v2 bound.
          return kind === 'emptyPages' && cursorFormat !== 'v2' ? undefined : kind;
        }
      }
      return undefined;
    },
    nextCursor(bad, next, readAt, first) {
      if (bad === 'repeatCursor' && readAt) return readAt;
      if (bad === 'emptyPages' && first !== undefined)
        return respell(readAt ?? encodeCursorV2(first.timeMs, 'f'.repeat(24)), reads);
      if (bad === 'missingCursor') return undefined;
      return next;
    },
  };
}
