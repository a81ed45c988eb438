/**
 * TypeScript types of every model of the spec, inferred from the catalogue (so they cannot drift from it). Declared as
 * interfaces: TypeScript caches an interface, so a consumer's `Promise.all` over models does not re-expand the whole
 * inferred type (TS2589 "excessively deep" on User once the typed maps added a level).
 */
import type * as m from './catalogue.js';
import type { InferModel } from './field.js';

/* eslint-disable @typescript-eslint/no-empty-object-type -- interfaces on purpose (see above) */

export interface ArticleStats extends InferModel<typeof m.ArticleStats> {}
export interface ArticleLite extends InferModel<typeof m.ArticleLite> {}
export interface Article extends InferModel<typeof m.Article> {}
export interface EquipmentSkills extends InferModel<typeof m.EquipmentSkills> {}
export interface Equipment extends InferModel<typeof m.Equipment> {}
export interface Transaction extends InferModel<typeof m.Transaction> {}
export interface PartyEthics extends InferModel<typeof m.PartyEthics> {}
export interface Party extends InferModel<typeof m.Party> {}
export interface RankingDetail extends InferModel<typeof m.RankingDetail> {}
export interface SkillDetail extends InferModel<typeof m.SkillDetail> {}
export interface UserDates extends InferModel<typeof m.UserDates> {}
export interface UserInfos extends InferModel<typeof m.UserInfos> {}
export interface UserLeveling extends InferModel<typeof m.UserLeveling> {}
export interface UserRankings extends InferModel<typeof m.UserRankings> {}
export interface UserSkills extends InferModel<typeof m.UserSkills> {}
export interface UserStats extends InferModel<typeof m.UserStats> {}
export interface UserStatsWealth extends InferModel<typeof m.UserStatsWealth> {}
export interface UserStatsCase1 extends InferModel<typeof m.UserStatsCase1> {}
export interface UserStatsCase1ByRarity extends InferModel<typeof m.UserStatsCase1ByRarity> {}
export interface UserEquipment extends InferModel<typeof m.UserEquipment> {}
export interface UserMissions extends InferModel<typeof m.UserMissions> {}
export interface UserMissionsClaimedAt extends InferModel<typeof m.UserMissionsClaimedAt> {}
export interface UserPreferences extends InferModel<typeof m.UserPreferences> {}
export interface UserLite extends InferModel<typeof m.UserLite> {}
export interface User extends InferModel<typeof m.User> {}
export interface ElectionCandidate extends InferModel<typeof m.ElectionCandidate> {}
export interface Election extends InferModel<typeof m.Election> {}
export interface Donation extends InferModel<typeof m.Donation> {}
export interface DonationTotals extends InferModel<typeof m.DonationTotals> {}
export interface Country extends InferModel<typeof m.Country> {}

/** The pagination envelope (spec §2.1). The real service never sends `hasMore`; it is optional here. */
export interface CursorPage<T> {
  items: T[];
  nextCursor?: string | null;
  hasMore?: boolean;
}
