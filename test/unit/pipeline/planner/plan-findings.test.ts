/** What planning finds, recorded through its operations only: the cost figures, the users, the partition, the head. */
import { describe, expect, it } from 'vitest';
import type { PartitionSummary } from '../../../../src/pipeline/contract/job-types.js';
import { PlanFindings } from '../../../../src/pipeline/planner/plan-findings.js';

const summary = (o: Partial<PartitionSummary> = {}): PartitionSummary => ({
  key: 'countryId',
  walks: 3,
  window: { start: 0, end: 10 },
  provenTypes: ['trading'],
  unprovenTypes: [],
  rows: { covered: 5, uncovered: 0, repeated: 0, foreign: 0 },
  byType: {},
  pages: 7,
  unidentified: 0,
  ...o,
});

describe('PlanFindings', () => {
  it('starts with nothing found but the plan', () => {
    const found = new PlanFindings('rounds');
    expect(found.planning).toEqual({ plan: 'rounds', probeRounds: 0, probePages: 0, emptyWalks: 0 });
    expect(found.users).toBeUndefined();
    expect(found.partition).toBeUndefined();
    expect(found.head).toBeUndefined();
  });

  it('adds probe pages and empty walks, and keeps the most probe rounds of any resource', () => {
    const found = new PlanFindings('requests');
    found.addProbePages(16);
    found.addProbePages(3);
    found.noteEmptyWalk();
    found.noteEmptyWalk();
    found.noteProbeRounds(2);
    found.noteProbeRounds(1);
    expect(found.planning).toEqual({ plan: 'requests', probeRounds: 2, probePages: 19, emptyWalks: 2 });
  });

  it('keeps the head page and records the rows its rate puts in the window', () => {
    const found = new PlanFindings('rounds');
    const head = { rows: 100, spanMs: 60_000, users: new Map([['u1', 9]]), windowRows: 4_200 };
    found.noteHead(head);
    expect(found.head).toBe(head);
    expect(found.planning.feedWindowRows).toBe(4_200);
  });

  it("records the proof's summary and its pages; unused marks it so, and does nothing before a proof", () => {
    const found = new PlanFindings('rounds');
    found.partitionUnused();
    expect(found.partition).toBeUndefined();
    const proof = summary();
    found.noteProof(proof);
    expect(found.partition).toBe(proof);
    expect(found.planning.proofPages).toBe(7);
    found.partitionUnused();
    expect(found.partition).toEqual({ ...proof, used: false });
    expect(proof.used).toBeUndefined(); // the summary noted is not changed
  });

  it("records the users listed and the walks' window rows", () => {
    const found = new PlanFindings('rounds');
    const listing = { ids: ['u1', 'u2'], unlisted: 1 };
    found.noteUsers(listing);
    expect(found.users).toBe(listing);
    const rows = new Map([['c1', 40]]);
    found.noteWalkWindowRows(rows);
    expect(found.planning.walkWindowRows).toBe(rows);
  });

  it('gives a copy of the planning figures: later findings do not change one read earlier', () => {
    const found = new PlanFindings('rounds');
    const before = found.planning;
    found.addProbePages(5);
    found.noteEmptyWalk();
    expect(before).toEqual({ plan: 'rounds', probeRounds: 0, probePages: 0, emptyWalks: 0 });
    expect(found.planning.probePages).toBe(5);
  });
});
