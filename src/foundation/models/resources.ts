/**
 * The six published resources: what each is called (topic suffix = simulator truth name), which model its records
 * follow, which time orders its listing, and how repeats are recognised (dedup).
 */
import { Article, Donation, Election, Party, Transaction, User } from './catalogue.js';
import type { ModelDef } from './field.js';

export const RESOURCES = ['articles', 'transactions', 'parties', 'users', 'elections', 'donations'] as const;
export type ResourceName = (typeof RESOURCES)[number];

export interface ResourceInfo {
  name: ResourceName;
  /** The model of the records published to the resource's topic (the full profile for users). */
  model: ModelDef;
  /** The field the listing is sorted on, newest first (with `_id` as tie-break). */
  sortField: 'createdAt' | 'publishedAt';
  /**
   * `id`: records never change, a repeat is a repeat by `_id` alone (transactions, donations).
   * `version`: records change, `(_id, updatedAt)` identifies one version (users, parties, elections, articles).
   */
  dedup: 'id' | 'version';
  /** The listing procedure used for ingestion. */
  listProcedure: string;
}

export const RESOURCE_INFO: Readonly<Record<ResourceName, ResourceInfo>> = {
  articles: {
    name: 'articles',
    model: Article,
    sortField: 'publishedAt',
    dedup: 'version',
    listProcedure: 'article.getArticlesPaginated',
  },
  transactions: {
    name: 'transactions',
    model: Transaction,
    sortField: 'createdAt',
    dedup: 'id',
    listProcedure: 'transaction.getPaginatedTransactions',
  },
  parties: {
    name: 'parties',
    model: Party,
    sortField: 'createdAt',
    dedup: 'version',
    listProcedure: 'party.getManyPaginated',
  },
  users: {
    name: 'users',
    model: User,
    sortField: 'createdAt',
    dedup: 'version',
    listProcedure: 'user.getUsersByCountry',
  },
  elections: {
    name: 'elections',
    model: Election,
    sortField: 'createdAt',
    dedup: 'version',
    listProcedure: 'election.getElections',
  },
  donations: {
    name: 'donations',
    model: Donation,
    sortField: 'createdAt',
    dedup: 'id',
    listProcedure: 'donation.getManyPaginated',
  },
};

export function isResourceName(value: string): value is ResourceName {
  return (RESOURCES as readonly string[]).includes(value);
}

/**
 * The version of a record for dedup: `updatedAt` where the resource changes (falling back to `__v`, then
 * `createdAt`, since the spec gives elections no `updatedAt`), and nothing for immutable resources.
 */
export function recordVersion(resource: ResourceName, record: Record<string, unknown>): string {
  if (RESOURCE_INFO[resource].dedup === 'id') return '';
  const v = record['updatedAt'] ?? record['__v'] ?? record['createdAt'];
  // A version is a string (updatedAt) or a number (__v); anything else (a malformed record) has no usable version.
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}
