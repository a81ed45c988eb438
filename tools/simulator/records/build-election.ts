/** Elections: candidates from the country's users; votes, winners and status follow from the vote dates. */
import { DAY, STREAM } from '../generation/draws.js';
import type { WorldData } from '../generation/generate-world.js';
import { isoString } from '../internal/iso-string.js';
import { createRng, hash32 } from '../internal/prng.js';
import { ELECTION_TYPES } from '../vocab.js';
import { itemIdOf } from './item-id.js';
import type { ApiRecord, RecordBuilder } from './record-variant.js';

export function createElectionBuilder(data: WorldData): RecordBuilder {
  const { seed, startMs, versions, population } = data;
  const { table: elections, country: electionCountry, type: electionType } = data.elections;
  const { usersOfCountry, userParty, partyIds, countryIds, userId } = population;
  const r = createRng(0);
  return (row): ApiRecord => {
    const ident = elections.ident(row);
    const version = versions.elections.get(ident);
    r.reseed(hash32(seed, STREAM.electionBody, ident));
    const c = electionCountry[ident] as number;
    const createdMs = elections.time(row);
    const startVote = createdMs + DAY;
    const endVote = startVote + 2 * DAY;
    const pool = usersOfCountry[c] ?? [];
    const n = Math.min(pool.length, 2 + r.int(5));
    const candidates: ApiRecord[] = [];
    const votes: Record<string, number> = {};
    const extra = version?.v ?? 0;
    for (let k = 0; k < n; k++) {
      const u = pool[(r.int(pool.length) + k) % pool.length] as number;
      const id = userId(u);
      if (id in votes) continue;
      const voteCount = r.int(400) + (k === 0 ? extra : 0);
      votes[id] = voteCount;
      const p = userParty.get(u);
      candidates.push({
        user: id,
        ...(r.chance(0.6) ? { article: itemIdOf(seed, 4, ident, k) } : {}),
        ...(p >= 0 ? { party: partyIds[p] } : {}),
        voteCount,
        isElected: false,
      });
    }
    const type = ELECTION_TYPES[electionType[ident] as number] as string;
    const seats = type === 'congress' ? Math.min(3, candidates.length) : Math.min(1, candidates.length);
    const ended = endVote <= startMs;
    const ranked = [...candidates].sort((a, b) => (b['voteCount'] as number) - (a['voteCount'] as number));
    const elected = ended ? ranked.slice(0, seats) : [];
    for (const cand of elected) cand['isElected'] = true;
    const status = ended ? 'ended' : startVote <= startMs ? 'voting' : 'pending';
    return {
      _id: elections.oid(row),
      country: countryIds[c],
      type,
      status,
      votesStartAt: isoString(startVote),
      votesEndAt: isoString(endVote),
      createdAt: isoString(createdMs),
      electedCandidates: elected.map((cand) => cand['user']),
      isActive: !ended,
      candidates,
      votesCount: Object.values(votes).reduce((a, b) => a + b, 0),
      electedCount: elected.length,
      votes,
      __v: extra,
    };
  };
}
