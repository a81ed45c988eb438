/** TypeScript types of every model of the spec, inferred from the catalogue (so they cannot drift from it). */
import type * as m from './catalogue.js';
import type { InferModel } from './field.js';

export type ArticleStats = InferModel<typeof m.ArticleStats>;
export type ArticleLite = InferModel<typeof m.ArticleLite>;
export type Article = InferModel<typeof m.Article>;
export type EquipmentSkills = InferModel<typeof m.EquipmentSkills>;
export type Equipment = InferModel<typeof m.Equipment>;
export type Transaction = InferModel<typeof m.Transaction>;
export type PartyEthics = InferModel<typeof m.PartyEthics>;
export type Party = InferModel<typeof m.Party>;
export type RankingDetail = InferModel<typeof m.RankingDetail>;
export type SkillDetail = InferModel<typeof m.SkillDetail>;
export type UserDates = InferModel<typeof m.UserDates>;
export type UserInfos = InferModel<typeof m.UserInfos>;
export type UserLeveling = InferModel<typeof m.UserLeveling>;
export type UserRankings = InferModel<typeof m.UserRankings>;
export type UserSkills = InferModel<typeof m.UserSkills>;
export type UserStats = InferModel<typeof m.UserStats>;
export type UserStatsWealth = InferModel<typeof m.UserStatsWealth>;
export type UserStatsCase1 = InferModel<typeof m.UserStatsCase1>;
export type UserStatsCase1ByRarity = InferModel<typeof m.UserStatsCase1ByRarity>;
export type UserEquipment = InferModel<typeof m.UserEquipment>;
export type UserMissions = InferModel<typeof m.UserMissions>;
export type UserMissionsClaimedAt = InferModel<typeof m.UserMissionsClaimedAt>;
export type UserPreferences = InferModel<typeof m.UserPreferences>;
export type UserLite = InferModel<typeof m.UserLite>;
export type User = InferModel<typeof m.User>;
export type ElectionCandidate = InferModel<typeof m.ElectionCandidate>;
export type Election = InferModel<typeof m.Election>;
export type Donation = InferModel<typeof m.Donation>;
export type DonationTotals = InferModel<typeof m.DonationTotals>;
export type Country = InferModel<typeof m.Country>;

/** The pagination envelope (spec §2.1). The real service never sends `hasMore`; it is optional here. */
export interface CursorPage<T> {
  items: T[];
  nextCursor?: string | null;
  hasMore?: boolean;
}
