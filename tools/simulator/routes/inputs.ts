/**
 * The input schemas of every procedure, with the wire input names of wire-contract.json, validated with zod
 * (bad input -> 400 BAD_REQUEST).
 */
import { z } from 'zod';
import { ACCEPTED_TRANSACTION_TYPES, ARTICLE_FEED_TYPES } from '../vocab.js';

// Operations documented in the service's OpenAPI declare additionalProperties:false: unknown keys are rejected.
// The other ones (party, election, donation) are only known from client code: unknown keys are tolerated.
const cursor = z.string().nullish();
const direction = z.enum(['forward', 'backward']).nullish();
const limitOf = () => z.number().int().min(1).max(100).optional();
const id = z.string().min(1);

export const ROUTE_INPUTS = {
  articleById: z.strictObject({ articleId: id }),
  articlesPaginated: z.strictObject({
    type: z.enum(ARTICLE_FEED_TYPES),
    limit: z.number().min(1).max(100).optional(),
    cursor,
    userId: z.string().optional(),
    categories: z.array(z.string()).optional(),
    languages: z.array(z.string()).optional(),
    positiveScoreOnly: z.boolean().optional(),
  }),
  transactions: z
    .strictObject({
      limit: limitOf(),
      cursor,
      userId: z.string().optional(),
      muId: z.string().optional(),
      countryId: z.string().optional(),
      partyId: z.string().optional(),
      itemCode: z.string().optional(),
      transactionType: z
        .union([z.enum(ACCEPTED_TRANSACTION_TYPES), z.array(z.enum(ACCEPTED_TRANSACTION_TYPES))])
        .optional(),
    })
    .optional(),
  partyById: z.object({ partyId: id }),
  partiesPaginated: z
    .object({ countryId: z.string().optional(), limit: limitOf(), cursor, direction })
    .optional(),
  userById: z.strictObject({ userId: id }),
  userLite: z.strictObject({ userId: z.string().regex(/^[a-f\d]{24}$/) }),
  usersByCountry: z.strictObject({
    countryId: z.string().min(1),
    limit: z.number().min(1).max(100).optional(),
    cursor,
  }),
  elections: z.object({ countryId: z.string().optional(), limit: limitOf(), cursor, direction }).optional(),
  donations: z
    .object({
      muId: z.string().optional(),
      countryId: z.string().optional(),
      partyId: z.string().optional(),
      limit: limitOf(),
      cursor,
      direction,
    })
    .optional(),
  donationTotals: z
    .object({ muId: z.string().optional(), countryId: z.string().optional(), partyId: z.string().optional() })
    .optional(),
  countries: z.strictObject({}).optional(),
  equipment: z.strictObject({ userId: id }),
};
