/** Fixed vocabularies of the synthetic world (names, codes, enumerations). Order matters: the world indexes them. */
import { TRANSACTION_TYPES } from '../../src/foundation/models/transaction-types.js';

export const COUNTRY_NAMES = [
  'France',
  'Germany',
  'Poland',
  'Spain',
  'Italy',
  'Portugal',
  'Romania',
  'Serbia',
  'Croatia',
  'Hungary',
  'Ukraine',
  'Turkey',
  'Greece',
  'Bulgaria',
  'Sweden',
  'Norway',
  'Finland',
  'Denmark',
  'Netherlands',
  'Belgium',
  'Austria',
  'Switzerland',
  'Czechia',
  'Slovakia',
  'Slovenia',
  'Ireland',
  'United Kingdom',
  'Lithuania',
  'Latvia',
  'Estonia',
  'Brazil',
  'Argentina',
  'Chile',
  'Mexico',
  'Canada',
  'United States',
  'Japan',
  'China',
  'India',
  'Iran',
] as const;

const SYLLABLES = [
  'ka',
  'lo',
  'ri',
  'an',
  'mer',
  'to',
  'vi',
  'sa',
  'dor',
  'el',
  'un',
  'zar',
  'bo',
  'li',
  'na',
  'ter',
];

/** Country name number `i`: a real name for the first forty, a made-up one beyond. */
export function countryName(i: number): string {
  const real = COUNTRY_NAMES[i];
  if (real !== undefined) return real;
  const a = SYLLABLES[i % SYLLABLES.length] as string;
  const b = SYLLABLES[Math.floor(i / SYLLABLES.length) % SYLLABLES.length] as string;
  const c = SYLLABLES[(i * 7) % SYLLABLES.length] as string;
  const name = `${a}${b}${c}ia`;
  return `${name[0]?.toUpperCase() ?? ''}${name.slice(1)} ${i}`;
}

// Transaction types the real service is seen to emit: one list, in src/foundation/models (the planner's proof knows them too).
export { TRANSACTION_TYPES };
export type { TransactionType } from '../../src/foundation/models/transaction-types.js';

/** Types the service's input schema accepts (one more than it is seen to emit). */
export const ACCEPTED_TRANSACTION_TYPES = [...TRANSACTION_TYPES, 'countryMoneyTransfer'] as const;

/** Relative frequency of each type (same order as TRANSACTION_TYPES). */
export const TRANSACTION_TYPE_WEIGHTS = [3, 30, 14, 18, 4, 3, 8, 7, 4, 9] as const;

/** Traded goods (no Equipment attached). */
export const GOOD_CODES = [
  'bread',
  'steel',
  'iron',
  'grain',
  'oil',
  'lead',
  'limestone',
  'concrete',
  'fish',
  'livestock',
  'lightAmmo',
  'heavyAmmo',
  'petroleum',
  'coca',
] as const;

/** Equipment slots, in the order of UserEquipment. */
export const SLOTS = ['ammo', 'helmet', 'chest', 'boots', 'pants', 'gloves', 'weapon'] as const;
export type Slot = (typeof SLOTS)[number];

/** Equipment codes by slot (rarity grows with the tier digit). */
export const EQUIPMENT_CODES: Readonly<Record<Slot, readonly string[]>> = {
  ammo: ['lightAmmo', 'heavyAmmo'],
  helmet: ['helmet1', 'helmet2', 'helmet3', 'helmet4', 'helmet5'],
  chest: ['chest1', 'chest2', 'chest3', 'chest4', 'chest5'],
  boots: ['boots1', 'boots2', 'boots3', 'boots4', 'boots5'],
  pants: ['pants1', 'pants2', 'pants3', 'pants4', 'pants5'],
  gloves: ['gloves1', 'gloves2', 'gloves3', 'gloves4', 'gloves5'],
  weapon: ['knife', 'gun', 'rifle', 'sniper', 'tank', 'jet'],
};
export const EQUIPMENT_SLOTS = ['helmet', 'chest', 'boots', 'pants', 'gloves', 'weapon'] as const;
export const CASE_CODES = ['case1', 'case2'] as const;
export const RARITIES = ['common', 'uncommon', 'rare', 'epic', 'legendary', 'mythic'] as const;

/** Every item code a transaction can carry, in a fixed order (index = stored code). */
export const ITEM_CODES: readonly string[] = [
  ...GOOD_CODES,
  ...CASE_CODES,
  ...EQUIPMENT_SLOTS.flatMap((slot) => EQUIPMENT_CODES[slot]),
];

export const ARTICLE_FEED_TYPES = ['daily', 'weekly', 'top', 'my', 'subscriptions', 'last'] as const;
export type ArticleFeedType = (typeof ARTICLE_FEED_TYPES)[number];
export const ARTICLE_TYPES = ['news', 'opinion', 'guide', 'announcement'] as const;
export const ARTICLE_CATEGORIES = ['politics', 'economy', 'military', 'social', 'tutorial', 'fun'] as const;
export const LANGUAGES = ['en', 'fr', 'de', 'es', 'pl', 'pt', 'tr', 'ru', 'it', 'ro'] as const;
export const ELECTION_TYPES = ['president', 'congress', 'party'] as const;
export const RANKING_TIERS = ['bronze', 'silver', 'gold', 'platinum', 'diamond', 'master'] as const;
export const WORDS = [
  'war',
  'peace',
  'market',
  'empire',
  'alliance',
  'steel',
  'bread',
  'congress',
  'vote',
  'front',
  'border',
  'tax',
  'army',
  'glory',
  'trade',
  'union',
  'republic',
  'crisis',
  'victory',
  'guide',
  'update',
  'news',
  'party',
  'future',
] as const;

/** Keys of a user's `finishedTours` (the onboarding tours of the game's UI). */
export const TOUR_NAMES = [
  'welcome',
  'market',
  'battle',
  'company',
  'military-unit',
  'party',
  'articles',
] as const;
