/**
 * kafkajs 2.2.4 adds a transaction's partitions one produce request at a time: before each send it sends an
 * AddPartitionsToTxn for the partitions of that send that the transaction has not added yet. The pool sends ONE
 * partition per produce request (`transaction-requests.ts`, a correctness rule), so a transaction touching n
 * partitions paid n AddPartitionsToTxn round trips to the coordinator. A transaction's partitions are known before
 * its first send, so the pool announces them (`announce` on the table `installKafkajsPatches()` returns, which the pool
 * is given) and this patch adds them all with the first AddPartitionsToTxn; the later ones of the same transaction are
 * answered here without a request.
 *
 * The announcement is keyed by transactional.id and producer epoch and lasts until the pool forgets it (`forget`,
 * after the commit or the abort); a request for another epoch, or for a partition not announced, goes to the broker as before.
 * A failed request marks nothing added (kafkajs retries it, and the retry sends the whole set again). Adding a
 * partition the transaction then does not write to costs a commit marker on it, nothing else.
 */
import { KafkajsPatchError } from '../../../foundation/errors/index.js';
import { patchKafkajsMethod } from './patch-kafkajs.js';

export interface AddPartitionsArgs {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  topics: { topic: string; partitions: number[] }[];
}
export type AddPartitions = (this: unknown, args: AddPartitionsArgs) => Promise<unknown>;

interface Announcement {
  /** `topic#partition` of every partition the open transaction will write. */
  partitions: Set<string>;
  /** The producer epoch whose transaction added them; undefined until the first request. */
  epoch: number | undefined;
  added: Set<string>;
}

/**
 * The announcements of one process's transactions, which the patch answers from. `installKafkajsPatches()` returns
 * the table its installed patch reads; the producer pool gets it passed in and writes it.
 */
export interface TransactionPartitions {
  /**
   * Announces the partitions the next transaction of `transactionalId` will write (replacing any earlier one).
   * @example partitions.announce('p.tx.m0.0', [{ topic: 'p.transactions', partition: 2 }])
   */
  announce(transactionalId: string, partitions: readonly { topic: string; partition: number }[]): void;
  /** Ends the announcement of `transactionalId` (its transaction committed or aborted). */
  forget(transactionalId: string): void;
  /** How many AddPartitionsToTxn requests were answered without a round trip. */
  saved(): number;
}

/** The table behind {@link TransactionPartitions}, as the patch reads it. */
interface AnnouncementTable extends TransactionPartitions {
  get(transactionalId: string): Announcement | undefined;
  countSaved(): void;
}

/** An empty table of announcements. */
export function createTransactionPartitions(): TransactionPartitions {
  const announcements = new Map<string, Announcement>();
  let saved = 0;
  const table: AnnouncementTable = {
    announce(transactionalId, partitions) {
      announcements.set(transactionalId, {
        partitions: new Set(partitions.map((p) => `${p.topic}#${p.partition}`)),
        epoch: undefined,
        added: new Set(),
      });
    },
    forget(transactionalId) {
      announcements.delete(transactionalId);
    },
    saved: () => saved,
    get: (transactionalId) => announcements.get(transactionalId),
    countSaved() {
      saved += 1;
    },
  };
  return table;
}

/**
 * `original` (kafkajs' `Broker.prototype.addPartitionsToTxn`) answering from the announcements: the first request of
 * an announced transaction adds every announced partition; a request whose partitions are all added already is
 * answered without a round trip.
 */
export function addingAnnouncedPartitions(
  original: AddPartitions,
  partitions: TransactionPartitions,
): AddPartitions {
  const table = partitions as AnnouncementTable;
  return async function (this: unknown, args: AddPartitionsArgs): Promise<unknown> {
    const a = table.get(args.transactionalId);
    if (a === undefined) return original.call(this, args);
    if (a.epoch !== args.producerEpoch) {
      a.epoch = args.producerEpoch;
      a.added = new Set();
    }
    const asked = args.topics.flatMap(({ topic, partitions }) => partitions.map((p) => `${topic}#${p}`));
    if (asked.every((id) => a.added.has(id))) {
      table.countSaved();
      return { throttleTime: 0, errors: [] };
    }
    // Everything asked and everything announced that is not added yet, in one request.
    const wanted = new Set(asked.filter((id) => !a.added.has(id)));
    for (const id of a.partitions) if (!a.added.has(id)) wanted.add(id);
    const byTopic = new Map<string, number[]>();
    for (const id of wanted) {
      const cut = id.lastIndexOf('#');
      const topic = id.slice(0, cut);
      const list = byTopic.get(topic) ?? [];
      list.push(Number(id.slice(cut + 1)));
      byTopic.set(topic, list);
    }
    const topics = [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
    const answer = await original.call(this, { ...args, topics });
    // Only a transaction still announced under the same epoch learns what was added.
    if (table.get(args.transactionalId) === a && a.epoch === args.producerEpoch)
      for (const id of wanted) a.added.add(id);
    return answer;
  };
}

const TABLE = Symbol.for('gamedata.transactionPartitionsAhead.table');
type Installed = AddPartitions & { [TABLE]?: TransactionPartitions };

/**
 * Installs the patch in this process's kafkajs (idempotent) and returns the table it answers from: a new one on the
 * first install, the installed patch's own afterwards (the patch is process-wide, so is its table).
 */
export function installTransactionPartitionsAhead(): TransactionPartitions {
  const installed: Installed = patchKafkajsMethod<AddPartitions>(
    'kafkajs/src/broker/index.js',
    'addPartitionsToTxn',
    'gamedata.transactionPartitionsAhead',
    'adding announced partitions',
    (original) => {
      const table = createTransactionPartitions();
      return Object.assign(addingAnnouncedPartitions(original, table), { [TABLE]: table });
    },
  );
  const table = installed[TABLE];
  if (table === undefined)
    throw new KafkajsPatchError(
      'the AddPartitionsToTxn patch installed in this process has no announcement table',
    );
  return table;
}
