/**
 * The whole generated state of a world: every resource's rows and attribute columns, plus the versions that
 * live mode bumps. Pure data; the record builders (`../records/`) turn rows into API records.
 */
import type { OrderedTable } from '../ordered-table.js';
import { generateArticles, type ArticleRows } from './generate-articles.js';
import {
  createDonationTargetDraw,
  generateDonations,
  type DonationRows,
  type DrawDonationTarget,
} from './generate-donations.js';
import { generateElections, type ElectionRows } from './generate-elections.js';
import { generatePopulation, type Population } from './generate-population.js';
import { generateTransactions, type TransactionRows } from './generate-transactions.js';
import type { ScaleSpec } from './scales.js';

/** A mutable entity's current version: `v` changes so far, `at` the time of the last one. */
export interface EntityVersion {
  v: number;
  at: number;
}

/** Versions of the mutable entities by identity (absent = never changed). */
export interface EntityVersions {
  users: Map<number, EntityVersion>;
  parties: Map<number, EntityVersion>;
  articles: Map<number, EntityVersion>;
  elections: Map<number, EntityVersion>;
}

export interface WorldData {
  readonly seed: number;
  readonly spec: ScaleSpec;
  /** The world's initial now (ms). */
  readonly startMs: number;
  readonly extraFields: boolean;
  readonly population: Population;
  readonly articles: ArticleRows;
  readonly elections: ElectionRows;
  readonly donations: DonationRows;
  readonly transactions: TransactionRows;
  readonly drawDonationTarget: DrawDonationTarget;
  readonly versions: EntityVersions;
  /** Views counted per article identity (`article.getArticleById`). */
  readonly articleViews: Map<number, number>;
}

/** Generates every resource in a fixed order and seals the tables (their initial rows are final). */
export function generateWorld(
  seed: number,
  spec: ScaleSpec,
  startMs: number,
  extraFields: boolean,
  withoutCountry: Readonly<Partial<Record<string, number>>> = {},
): WorldData {
  const population = generatePopulation(seed, spec, startMs);
  const articles = generateArticles(seed, spec, startMs, population);
  const elections = generateElections(seed, spec, startMs);
  const drawDonationTarget = createDonationTargetDraw(spec, population);
  const donations = generateDonations(seed, spec, startMs, population, drawDonationTarget);
  const transactions = generateTransactions(
    seed,
    spec,
    startMs,
    population,
    drawDonationTarget,
    withoutCountry,
  );
  const sealed: OrderedTable[] = [
    population.users,
    population.parties,
    articles.table,
    elections.table,
    donations.table,
    transactions.table,
  ];
  for (const table of sealed) table.seal();
  return {
    seed,
    spec,
    startMs,
    extraFields,
    population,
    articles,
    elections,
    donations,
    transactions,
    drawDonationTarget,
    versions: { users: new Map(), parties: new Map(), articles: new Map(), elections: new Map() },
    articleViews: new Map(),
  };
}
