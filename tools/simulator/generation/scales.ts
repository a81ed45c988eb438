/** The three sizes of world the simulator builds (rows per resource, history depth, the 72 h share). */

export type Scale = 'small' | 'medium' | 'large';

/** Sizes of a scale. */
export interface ScaleSpec {
  countries: number;
  users: number;
  mus: number;
  parties: number;
  articles: number;
  elections: number;
  donations: number;
  transactions: number;
  /** How far back the history goes (days before `now`). */
  historyDays: number;
  /** Share of transactions inside the last 72 h (the real service does ~2.2 M there). */
  windowShare: number;
  /** Rows of the same-millisecond burst inside the last 72 h (more than a page of 100). */
  burst: number;
}

export const SCALES: Readonly<Record<Scale, ScaleSpec>> = {
  small: {
    countries: 20,
    users: 400,
    mus: 30,
    parties: 40,
    articles: 300,
    elections: 120,
    donations: 1_500,
    transactions: 12_000,
    historyDays: 120,
    windowShare: 0.3,
    burst: 150,
  },
  medium: {
    countries: 180,
    users: 20_000,
    mus: 950,
    parties: 480,
    articles: 20_000,
    elections: 3_000,
    donations: 100_000,
    transactions: 1_000_000,
    historyDays: 365,
    windowShare: 0.22,
    burst: 300,
  },
  large: {
    countries: 180,
    users: 124_000,
    mus: 950,
    parties: 480,
    articles: 60_000,
    elections: 6_000,
    donations: 300_000,
    transactions: 10_000_000,
    historyDays: 730,
    windowShare: 0.2,
    burst: 500,
  },
};
