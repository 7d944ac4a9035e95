/**
 * The list writer lease: how large subscriber writes use BatchWriteItem (no
 * transaction per subscriber) and still keep the list's counters exact.
 *
 * - One writer at a time per list holds the lease: LEASE_SHARDS items
 *   `WRITER#<client>#<list>` / `LEASE#nn` (owner, expiresAt), all taken in one
 *   transaction. Writes of a single transaction (opt-in, bounces, small API
 *   requests, deletions) stay transactional and carry a ConditionCheck that
 *   no writer holds one random shard (`leaseFreeCheck`), so they never
 *   interleave with a bulk write (they wait and retry while it is held) and
 *   rarely conflict with each other on the same shard.
 * - Bulk writes read the current items, then, per chunk of lines that move
 *   a counter, put a journal entry `J#<writeId>` listing each line's delta
 *   (one PutItem, no transaction); then the subscriber items, stamped with
 *   that writeId, go with BatchWriteItem.
 * - When the holder releases the lease, it folds its entries into the
 *   counters: one transaction per 98 entries deletes them (each must still
 *   exist) and adds their deltas to a counter shard, checking the lease is
 *   still its own. So a list's counters lag a running bulk write by at most
 *   one hold (HOLD_MS plus its last chunks) and are exact after it.
 * - If a writer died (or its BatchWriteItem failed) before every item of a
 *   chunk landed, the next holder (or the writer itself) reads the entry's
 *   items back and adds the deltas of the lines whose item carries the
 *   entry's stamp, in one transaction with the entry's deletion: exactly once.
 * - The lease is only released clean (owner removed) once every journal entry
 *   of the holder is settled, and a lease left by a dead writer is taken over
 *   after it expires, settling first. A process shares its lease among its
 *   concurrent bulk writes of the list (an import's chunks in flight) for at
 *   most HOLD_MS before letting waiting writers in.
 *
 * The one unfenced step: a writer paused past its lease's expiry between its
 * journal transaction and its BatchWriteItem (it checks the time left before
 * each chunk; the lease is leaseMs(), 60 s, a chunk takes well under a second).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { backoffMs, batchGet, ddb, isTransactionConflict, queryAll, reasonCodes, sleep, tableName, transactWrite } from '../db/client.js';
import { config } from '../config.js';
import { keys } from '../db/keys.js';
import { HttpError } from '../http/errors.js';
import { count, logger } from '../observability/index.js';
import { addDeltas, zeroDeltas, type CounterDeltas } from './rules.js';
import { type AddressFilter, filterForHold, keepKnowledge } from './members.js';
import { counterUpdate, readCounters, type SubscriberItem } from './store.js';

/** Items of one lease (see leaseFreeCheck). */
export const LEASE_SHARDS = 16;
/** How long a lease lasts (LIST_LEASE_SECONDS, 60 s): longer than any single bulk write (an API request ends by 29 s; an import chunk in about a second). */
export const leaseMs = () => config.listLeaseSeconds * 1000;
/** A writer starts no chunk with less than this left on its lease (a third of it, at most 20 s). */
const leaseSafetyMs = () => Math.min(20_000, leaseMs() / 3);
/** A process lets new bulk writes join its lease for this long after taking it, then lets waiting writers in. */
export const HOLD_MS = 2_000;
/** How long a writer waits for another's lease before answering 503. */
export const LEASE_WAIT_MS = 20_000;
/** After a release that others waited for, the same process waits this long before taking the lease again. */
const YIELD_MS = 300;

/** The list is held by another writer for longer than a request may wait: retry later. */
export class ListBusyError extends HttpError {
  constructor() {
    super(503, 'Another large write to this list is running; nothing of this request was applied. Retry in a few seconds.', { 'retry-after': '5' });
  }
}

/** The lease ran out (or was taken over) before a chunk could be written: the chunk was not started. */
export class ListLeaseLostError extends Error {
  override name = 'ListLeaseLostError';
}

/**
 * The transaction item that puts a transactional subscriber write behind any
 * bulk writer of the list: its condition fails while a writer holds the lease
 * (on one random shard), and it counts the write on that shard (`w`), so a
 * bulk writer can tell whether anybody wrote the list between its holds
 * (shared/subscribers/members.ts).
 */
export function leaseFreeCheck(clientId: string, listId: number) {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.listWriterShard(clientId, listId, Math.floor(Math.random() * LEASE_SHARDS)),
      UpdateExpression: 'ADD w :one',
      ConditionExpression: 'attribute_not_exists(#o)',
      ExpressionAttributeNames: { '#o': 'owner' },
      ExpressionAttributeValues: { ':one': 1 },
    },
  };
}

interface LeaseItem {
  sk: string;
  owner?: string;
  expiresAt?: number;
  /** Transactional writes counted on this shard. */
  w?: number;
  /** Leases taken (each acquisition adds 1 to every shard). */
  g?: number;
}

/** One line's counter delta as a journal entry carries it. */
export interface JournalLine {
  email: string;
  deltas: CounterDeltas;
}

const DELTA_NAMES = Object.keys(zeroDeltas()) as Array<keyof CounterDeltas>;
const encodeLine = (l: JournalLine) => `${l.email}\t${DELTA_NAMES.map((n) => l.deltas[n]).join(',')}`;
function decodeLine(text: string): JournalLine {
  const [email, numbers] = text.split('\t');
  const values = numbers.split(',').map(Number);
  const deltas = zeroDeltas();
  DELTA_NAMES.forEach((n, i) => (deltas[n] = values[i]));
  return { email, deltas };
}

/** One process's hold of one list's lease, shared by its concurrent bulk writes. */
class Hold {
  users = 0;
  /** Journal entries written under this hold and their summed deltas, folded into the counters at release. */
  readonly journals: Array<{ key: Record<string, string>; deltas: CounterDeltas }> = [];
  /** Addresses being written by a chunk under this hold, and the chunk's end. */
  readonly busy = new Map<string, Promise<void>>();
  /** Set when a settlement failed: the lease is left to expire, so the next holder settles. */
  poisoned = false;
  released!: Promise<void>;
  markReleased!: () => void;
  constructor(
    readonly clientId: string,
    readonly listId: number,
    readonly owner: string,
    readonly acquiredAt: number,
    readonly expiresAt: number,
  ) {
    this.released = new Promise((done) => (this.markReleased = done));
  }
  get joinable() {
    return !this.poisoned && Date.now() - this.acquiredAt < HOLD_MS;
  }
  /** Chunks journaled under this hold (their writeIds sort in this order). */
  seq = 0;
  /** Addresses the list may hold, when this process knows them all (no read for the others); see members.ts. */
  filter?: AddressFilter;
  /** The lease shards' sums read as the lease was taken. */
  seen = { writes: 0, generation: 0 };
  /** Throws unless the lease has time left for one more chunk and nothing under it is left unsettled. */
  checkTime(): void {
    if (this.poisoned) throw new ListLeaseLostError('a chunk under this lease could not be settled; the next writer settles it');
    if (Date.now() > this.expiresAt - leaseSafetyMs()) throw new ListLeaseLostError('the list writer lease is about to expire');
  }
}

const holds = new Map<string, Hold>();
const acquiring = new Map<string, Promise<Hold>>();
const holdKey = (clientId: string, listId: number) => `${clientId}#${listId}`;

/**
 * Runs `work` holding the list's writer lease (shared with this process's
 * other bulk writes of the list that started within HOLD_MS). Waits up to
 * LEASE_WAIT_MS for another writer's lease, then throws ListBusyError.
 */
export async function withListLease<T>(clientId: string, listId: number, work: (hold: Hold) => Promise<T>, { join = true } = {}): Promise<T> {
  // join: false takes a lease of its own and no knowledge of the list, as another process would (tests of writers
  // in several processes).
  const hold = join ? await joinOrAcquire(clientId, listId) : await acquire(clientId, listId, Date.now() + LEASE_WAIT_MS, { foreign: true });
  hold.users++;
  try {
    return await work(hold);
  } finally {
    hold.users--;
    if (hold.users === 0) await release(hold);
  }
}

async function joinOrAcquire(clientId: string, listId: number): Promise<Hold> {
  const key = holdKey(clientId, listId);
  const deadline = Date.now() + LEASE_WAIT_MS;
  for (;;) {
    const held = holds.get(key);
    if (held?.joinable) return held;
    if (held) {
      await held.released;
      continue;
    }
    const pending = acquiring.get(key);
    if (pending) {
      await pending.catch(() => undefined);
      continue;
    }
    const attempt = acquire(clientId, listId, deadline);
    acquiring.set(key, attempt);
    try {
      const hold = await attempt;
      holds.set(key, hold);
      return hold;
    } finally {
      acquiring.delete(key);
    }
  }
}

const shardIndexes = Array.from({ length: LEASE_SHARDS }, (_, i) => i);

/** Takes the lease (waiting for a live holder, taking over an expired one), then settles any journal a dead writer left. */
async function acquire(clientId: string, listId: number, deadline: number, { foreign = false } = {}): Promise<Hold> {
  const owner = randomUUID();
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    try {
      await transactWrite(
        shardIndexes.map((shard) => ({
          Update: {
            TableName: tableName(),
            Key: keys.listWriterShard(clientId, listId, shard),
            UpdateExpression: 'SET #o = :o, expiresAt = :e ADD g :one',
            ConditionExpression: 'attribute_not_exists(#o) OR expiresAt < :now',
            ExpressionAttributeNames: { '#o': 'owner' },
            ExpressionAttributeValues: { ':o': owner, ':e': now + leaseMs(), ':now': now, ':one': 1 },
          },
        })),
      );
      const hold = new Hold(clientId, listId, owner, now, now + leaseMs());
      // One Query of the writer partition: the shards' sums, and a dead writer's journal (normally none).
      const partition = await readWriterPartition(clientId, listId);
      const shards = partition.filter((i) => i.sk.startsWith(keys.listWriterShardPrefix())) as unknown as LeaseItem[];
      hold.seen = {
        writes: shards.reduce((sum, shard) => sum + Number(shard.w ?? 0), 0),
        generation: Number(shards.find((shard) => shard.sk === keys.listWriterShard(clientId, listId, 0).sk)?.g ?? 0),
      };
      const settled = await settleJournal(hold, partition.filter((i) => i.sk.startsWith(keys.listWriterJournalPrefix())) as unknown as JournalItem[]);
      if (!foreign) {
        hold.filter = await filterForHold(clientId, listId, hold.seen, async () => {
          const c = await readCounters(clientId, listId);
          return c.subscribed + c.unsubscribed === 0;
        });
      }
      if (settled.size > 0) {
        logger.warn('list writer journal settled after a writer died', { clientId, listId, entries: settled.size });
        count('ListWriterTakeovers', 1);
      }
      return hold;
    } catch (err) {
      if (!isTransactionConflict(err)) throw err;
    }
    if (Date.now() > deadline) throw new ListBusyError();
    if (attempt % 4 === 0) await markWaiting(clientId, listId);
    await sleep(25 + Math.random() * Math.min(200, 25 * 2 ** attempt));
  }
}

/** Tells the holder that someone waits (it then yields for a moment after its release). */
async function markWaiting(clientId: string, listId: number): Promise<void> {
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.listWriterWaiting(clientId, listId), at: Date.now() } }));
}

/**
 * For a transactional writer that found the lease held: when the holder's
 * lease has expired (it died), takes it over, settles and releases it; else
 * says it waits. Returns after either.
 */
export async function waitForLease(clientId: string, listId: number): Promise<void> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.listWriterShard(clientId, listId, 0), ConsistentRead: true }));
  const shard = out.Item as LeaseItem | undefined;
  if (shard?.owner && (shard.expiresAt ?? 0) < Date.now()) await withListLease(clientId, listId, async () => undefined);
  else await markWaiting(clientId, listId);
}

/** Deletes the hold's settled journal entries and removes the owner (unless a settlement failed). */
async function release(hold: Hold): Promise<void> {
  const key = holdKey(hold.clientId, hold.listId);
  if (holds.get(key) === hold) holds.delete(key);
  try {
    if (hold.poisoned) return;
    await foldJournal(hold);
    await transactWrite(
      shardIndexes.map((shard) => ({
        Update: {
          TableName: tableName(),
          Key: keys.listWriterShard(hold.clientId, hold.listId, shard),
          UpdateExpression: 'REMOVE #o, expiresAt',
          ConditionExpression: '#o = :o',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':o': hold.owner },
        },
      })),
    );
    if (hold.filter) keepKnowledge(hold.clientId, hold.listId, { filter: hold.filter, ...hold.seen });
    const waiting = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.listWriterWaiting(hold.clientId, hold.listId) }));
    const at = (waiting.Item as { at?: number } | undefined)?.at;
    if (at !== undefined && Date.now() - at < 3_000) await sleep(YIELD_MS);
  } catch (err) {
    // Left to expire: the next holder settles the journal (nothing is lost, the list waits out the lease).
    logger.warn('list writer lease not released', { clientId: hold.clientId, listId: hold.listId, error: err as Error });
  } finally {
    hold.markReleased();
  }
}

/**
 * Waits until none of `emails` is being written under this hold, then marks
 * them busy until `done` settles (concurrent bulk writes of one process never
 * write one address at once).
 */
export async function claimAddresses(hold: Hold, emails: string[], done: Promise<unknown>): Promise<void> {
  for (;;) {
    const blocking = emails.map((e) => hold.busy.get(e)).filter((p): p is Promise<void> => p !== undefined);
    if (blocking.length === 0) break;
    await Promise.all(blocking);
  }
  const end = done.then(
    () => undefined,
    () => undefined,
  );
  for (const email of emails) hold.busy.set(email, end);
  void end.then(() => {
    for (const email of emails) if (hold.busy.get(email) === end) hold.busy.delete(email);
  });
}

/** Entries folded per transaction (with the lease check and the counter shard: 100 items). */
const FOLD_BATCH = 98;

/**
 * Records a chunk's counter deltas in a journal entry before its items are
 * written (one PutItem). Returns the writeId to stamp on the chunk's items.
 */
export async function journalChunk(hold: Hold, lines: JournalLine[]): Promise<string> {
  hold.checkTime();
  const writeId = `${hold.owner}#${String(++hold.seq).padStart(9, '0')}`;
  const total = zeroDeltas();
  for (const line of lines) addDeltas(total, line.deltas);
  const key = keys.listWriterJournal(hold.clientId, hold.listId, writeId);
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...key, writeId, lines: lines.map(encodeLine).join('\n') } }));
  hold.journals.push({ key, deltas: total });
  return writeId;
}

/**
 * Folds the hold's journal entries into the counters: per FOLD_BATCH
 * entries, one transaction deletes them and adds their deltas to a counter
 * shard, fenced by the lease. A failure poisons the hold (the next holder
 * settles what is left).
 */
async function foldJournal(hold: Hold): Promise<void> {
  while (hold.journals.length > 0) {
    const batch = hold.journals.slice(0, FOLD_BATCH);
    const total = zeroDeltas();
    for (const entry of batch) addDeltas(total, entry.deltas);
    const counter = counterUpdate(hold.clientId, hold.listId, total);
    const items = [
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.listWriterShard(hold.clientId, hold.listId, Math.floor(Math.random() * LEASE_SHARDS)),
          ConditionExpression: '#o = :o',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':o': hold.owner },
        },
      },
      ...batch.map((entry) => ({ Delete: { TableName: tableName(), Key: entry.key, ConditionExpression: 'attribute_exists(pk)' } })),
      ...(counter ? [counter] : []),
    ];
    for (let attempt = 0; ; attempt++) {
      try {
        await transactWrite(items);
        break;
      } catch (err) {
        // A conflict with a transactional writer's check of the same shard or counter: retry. The lease gone: stop.
        if (!isTransactionConflict(err) || reasonCodes(err)[0] === 'ConditionalCheckFailed' || attempt >= 8) {
          hold.poisoned = true;
          throw err;
        }
        await sleep(backoffMs(attempt));
      }
    }
    hold.journals.splice(0, batch.length);
  }
}

/**
 * Settles journal entries: for each, reads its lines' items and adds the
 * deltas of those whose item carries the entry's stamp to the counters, in
 * one transaction with the entry's deletion. Returns the addresses whose line
 * landed, by writeId. All entries of the list when `writeIds` is omitted (a
 * takeover); on failure the hold is poisoned (left to expire) and it throws.
 */
export async function settleJournal(hold: Hold, which: string[] | JournalItem[]): Promise<Map<string, Set<string>>> {
  const landed = new Map<string, Set<string>>();
  try {
    const entries = await Promise.all(which.map(async (w) => (typeof w === 'string' ? readJournal(hold, w) : w)));
    for (const entry of entries) {
      if (!entry) continue;
      const lines = entry.lines ? entry.lines.split('\n').map(decodeLine) : [];
      const items = await batchGet<SubscriberItem & { writeId?: string }>(lines.map((l) => keys.subscriber(hold.clientId, hold.listId, l.email)));
      const stamped = new Set(items.filter((i) => landedBy(i.writeId, entry.writeId)).map((i) => i.email));
      const landedDeltas = zeroDeltas();
      for (const line of lines) if (stamped.has(line.email)) addDeltas(landedDeltas, line.deltas);
      const counter = counterUpdate(hold.clientId, hold.listId, landedDeltas);
      const journalKey = keys.listWriterJournal(hold.clientId, hold.listId, entry.writeId);
      await transactWrite([
        { Delete: { TableName: tableName(), Key: journalKey, ConditionExpression: 'attribute_exists(pk)' } },
        ...(counter ? [counter] : []),
      ]);
      const index = hold.journals.findIndex((j) => j.key.sk === journalKey.sk);
      if (index >= 0) hold.journals.splice(index, 1);
      landed.set(entry.writeId, stamped);
      if (stamped.size < lines.length) count('ListWriterCorrections', 1);
    }
    return landed;
  } catch (err) {
    hold.poisoned = true;
    throw err;
  }
}

/**
 * True when an item stamped `stamp` shows that the line of entry `writeId`
 * landed: the stamp is the entry's, or a later entry's of the same holder
 * (a later chunk of the same address reads only after the earlier one
 * landed or was settled, and nothing follows an unsettled one).
 */
function landedBy(stamp: string | undefined, writeId: string): boolean {
  if (stamp === undefined) return false;
  const owner = writeId.slice(0, writeId.indexOf('#') + 1);
  return stamp === writeId || (stamp.startsWith(owner) && stamp > writeId);
}

interface JournalItem {
  writeId: string;
  lines?: string;
}

async function readJournal(hold: Hold, writeId: string): Promise<JournalItem | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.listWriterJournal(hold.clientId, hold.listId, writeId), ConsistentRead: true }));
  return out.Item as JournalItem | undefined;
}

/** Every item of a list's writer partition: lease shards, journal entries, the waiting mark. */
async function readWriterPartition(clientId: string, listId: number): Promise<Array<{ sk: string } & Record<string, unknown>>> {
  return queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.listWriterPartition(clientId, listId) },
    ConsistentRead: true,
  });
}

export type { Hold };
