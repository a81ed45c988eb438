/**
 * What planning finds on the way, and the one place it is recorded: its cost and choices (`PlannedRun['planning']`),
 * the users listed, the partition's summary, the feed's head page. The walk strategies tell it what they found through
 * its operations and read it through its read-only views; no other file assigns its fields.
 */
import type { PartitionSummary } from '../contract/job-types.js';
import type { FeedHead } from './busy-user-pieces.js';
import type { PlannedRun, UserListing } from './plan-inputs.js';

/** What planning found so far: its cost and choices, the users listed, the partition's summary, the feed's head. */
export class PlanFindings {
  readonly #planning: PlannedRun['planning'];
  #users: UserListing | undefined;
  #partition: PartitionSummary | undefined;
  #head: FeedHead | undefined;

  /** Nothing found yet: no probe, no empty walk, no users, no partition, no head page. */
  constructor(plan: PlannedRun['planning']['plan']) {
    this.#planning = { plan, probeRounds: 0, probePages: 0, emptyWalks: 0 };
  }

  /** What planning cost and chose so far (a copy: later findings do not change it). */
  get planning(): Readonly<PlannedRun['planning']> {
    return { ...this.#planning };
  }

  /** The users the listing showed, once listed. */
  get users(): UserListing | undefined {
    return this.#users;
  }

  /** The partition proof's summary, once proven (`used: false` when the plan did not use it). */
  get partition(): PartitionSummary | undefined {
    return this.#partition;
  }

  /**
   * The feed's head page (the volume estimate's), when it was read: the per-user walks start with the users it names
   * most, whose walks are the run's longest chains, and the busiest are cut into pieces (`busy-user-pieces.ts`).
   */
  get head(): FeedHead | undefined {
    return this.#head;
  }

  /** The feed's head page was read: kept, and the rows its rate puts in the proof's window recorded. */
  noteHead(head: FeedHead): void {
    this.#head = head;
    this.#planning.feedWindowRows = head.windowRows;
  }

  /** The users listed: the run's users (seed of its discovery set) and the unlisted count. */
  noteUsers(listing: UserListing): void {
    this.#users = listing;
  }

  /** The partition proof's summary, and the pages it read. */
  noteProof(summary: PartitionSummary): void {
    this.#partition = summary;
    this.#planning.proofPages = summary.pages;
  }

  /** The partition was proven but the plan does not use it. Does nothing before a proof. */
  partitionUnused(): void {
    if (this.#partition !== undefined) this.#partition = { ...this.#partition, used: false };
  }

  /** Probe pages read (the walks' probes, counted as they are read). */
  addProbePages(pages: number): void {
    this.#planning.probePages += pages;
  }

  /** A probed walk whose probe saw no row with a usable time. */
  noteEmptyWalk(): void {
    this.#planning.emptyWalks++;
  }

  /** A resource's walks took `rounds` probe rounds: the resources are probed at the same time, so the most counts. */
  noteProbeRounds(rounds: number): void {
    this.#planning.probeRounds = Math.max(this.#planning.probeRounds, rounds);
  }

  /** Each partition walk's rows in the proof's window, by value of the key (see `walkWindowRows`). */
  noteWalkWindowRows(rows: Map<string, number>): void {
    this.#planning.walkWindowRows = rows;
  }
}
