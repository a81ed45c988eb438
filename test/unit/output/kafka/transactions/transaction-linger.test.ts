import { describe, expect, it } from 'vitest';
import { transactionLinger } from '../../../../../src/output/kafka/transactions/producer-pool.js';

const o = { lingerMs: 25, lingerCommits: 8 };

describe('transactionLinger: how long a member waits for more commits before its next transaction', () => {
  it('waits while fewer than lingerCommits are queued and other bound slices could still join', () => {
    expect(transactionLinger(1, 16, o)).toBe(25);
    expect(transactionLinger(7, 16, o)).toBe(25);
    expect(transactionLinger(3, 5, o)).toBe(25);
  });

  it('starts at once when lingerCommits are queued', () => {
    expect(transactionLinger(8, 16, o)).toBe(0);
    expect(transactionLinger(20, 16, o)).toBe(0);
  });

  it('starts at once when every bound slice has asked already (a lone slice waits for nobody)', () => {
    expect(transactionLinger(1, 1, o)).toBe(0);
    expect(transactionLinger(5, 5, o)).toBe(0);
    // A commit of a slice unbound since (its count is gone): nobody left to wait for.
    expect(transactionLinger(2, 1, o)).toBe(0);
  });

  it('never waits with lingerMs 0', () => {
    expect(transactionLinger(1, 16, { lingerMs: 0, lingerCommits: 8 })).toBe(0);
  });
});
