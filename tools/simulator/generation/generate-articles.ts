/** Articles: sorted on `publishedAt` (the `_id` carries `createdAt`), indexed by author and author's country. */
import { createColumn, type Column } from '../internal/growable.js';
import { createRng, hash32 } from '../internal/prng.js';
import { createOrderedTable, type OrderedTable } from '../ordered-table.js';
import { ARTICLE_CATEGORIES, LANGUAGES } from '../vocab.js';
import { DAY, HOUR, STREAM } from './draws.js';
import type { Population } from './generate-population.js';
import type { ScaleSpec } from './scales.js';

/** Article attributes by identity; `index(row)` adds a row to the author and country indexes. */
export interface ArticleRows {
  readonly table: OrderedTable;
  readonly author: Column<Int32Array>;
  /** Index into ARTICLE_CATEGORIES / LANGUAGES. */
  readonly category: Column<Uint8Array>;
  readonly language: Column<Uint8Array>;
  readonly score: Column<Int32Array>;
  readonly created: Column<Float64Array>;
  readonly index: (row: number) => void;
}

export function generateArticles(
  seed: number,
  spec: ScaleSpec,
  startMs: number,
  population: Population,
): ArticleRows {
  const historyStart = startMs - spec.historyDays * DAY;
  const rng = createRng(hash32(seed, STREAM.articles));
  const author = createColumn(Int32Array, spec.articles);
  const category = createColumn(Uint8Array, spec.articles);
  const language = createColumn(Uint8Array, spec.articles);
  const score = createColumn(Int32Array, spec.articles);
  const created = createColumn(Float64Array, spec.articles);
  const times = new Float64Array(spec.articles);
  const secs = new Uint32Array(spec.articles);
  for (let i = 0; i < spec.articles; i++) {
    author.push(population.pickUser(rng));
    category.push(rng.int(ARTICLE_CATEGORIES.length));
    language.push(rng.int(LANGUAGES.length));
    score.push(rng.between(-20, 120));
    // Recent days are denser, so the daily and weekly feeds are not empty.
    const published = Math.floor(
      rng.chance(0.25) ? rng.float(startMs - 7 * DAY, startMs - 1) : rng.float(historyStart, startMs - 1),
    );
    const createdMs = published - rng.int(6 * HOUR);
    times[i] = published;
    secs[i] = Math.floor(createdMs / 1000);
    created.push(createdMs);
  }
  const table = createOrderedTable('articles', seed, times, secs);
  const { userCountry } = population;
  const index = (row: number): void => {
    const ident = table.ident(row);
    table.addToIndex('author', author.get(ident), row);
    table.addToIndex('country', userCountry.get(author.get(ident)), row);
  };
  for (let row = 0; row < table.length; row++) index(row);
  return { table, author, category, language, score, created, index };
}
