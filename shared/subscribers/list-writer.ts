/**
 * The list writer: the one module that writes a list's subscribers, both ways.
 *
 * - Transactional path (requests of up to LINES_PER_TRANSACTION lines, opt-in
 *   confirmations, bounces, deletions: `deleteSubscribers`): per transaction the subscriber items
 *   (conditioned on the versions read), a counter shard and the day shard of the same index (daily.ts), an outbox entry
 *   `E#<id>` carrying the events, and one check: no bulk writer holds the
 *   list (one random lease shard), or, while one does, none of its chunks in
 *   flight is writing these addresses (the flight item). `transact` is the only place that check
 *   and its retry live. After the transaction the events are stored (named
 *   after the lines' opIds, or the outbox id) and the outbox entry deleted.
 * - Bulk path (more lines): under the list's writer lease, per chunk of
 *   BULK_CHUNK_LINES the lines' deltas and events go into a journal entry
 *   `J#<writeId>` (one PutItem), the items with BatchWriteItem stamped with
 *   the writeId, then the chunk's events are stored. At release the entries
 *   are folded into the counters and the day shards (one transaction per 98 entries and their days).
 * - Claims: once a transaction asked to commit beside the bulk writer (the
 *   flight item's `wantAt`, read every 100 ms), the hold opens the flight
 *   item to transactions and claims the chunks in flight; from then on a bulk
 *   chunk adds its addresses (hashed) to the flight item before it reads them,
 *   and takes them out once its items landed (the entry marked `landed`); a
 *   transaction commits beside the bulk writer unless one of its addresses is
 *   claimed, and waits for that chunk only. The bulk writer never stops for
 *   small writes.
 * - Short holds: a bulk write holds the lease for at most HOLD_MS of chunk
 *   starts, then folds its journal, releases and takes the lease again (other
 *   bulk writers of the list get their turn).
 * - Crashes: a writer that dies leaves its lease (it expires after
 *   leaseMs()), its journal entries and outbox entries. Every list with such
 *   state has a sweep mark (written before the state); the sweeper
 *   (`sweepListWriters`) takes expired leases over, settles their journal
 *   (the lines whose item carries the entry's stamp: their deltas into the
 *   counters, their events into the event store, under the same name) and
 *   stores outbox events. Nothing applied is lost, nothing counted twice.
 * - Time: a write given a deadline starts no chunk within CHUNK_MARGIN_MS of
 *   it and answers what it applied (PartialWriteError, reason 'time').
 *
 * Per-container state: the one object `container` below; members.ts and
 * store.ts keep none of their own.
 */
import { randomUUID, createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import {
  backoffMs,
  batchGet,
  batchWrite,
  ddb,
  faultDetail,
  isConditionFailure,
  isRetryableStorageFault,
  isTransactionConflict,
  limiter,
  queryAll,
  reasonCodes,
  runPool,
  settledOrDeadline,
  sleep,
  tableName,
  transactWrite,
} from '../db/client.js';
import { config } from '../config.js';
import { keys } from '../db/keys.js';
import type { EventRecord } from '../events/types.js';
import { count, hashForLog, logger, traced } from '../observability/index.js';
import { EventsNotStoredError, ListBusyError, ListLeaseLostError, PartialWriteError, StorageBugError } from './errors.js';
import { HOLD_MS, LEASE_WAIT_MS } from './limits.js';
import { type AddressFilter, filterForHold, keepKnowledge, type KnownLists } from './members.js';
import { changeClock } from './clock.js';
import { addDaily, dailyOfDeletions, dailyOfLine, dayOf, zeroDaily, type DailyDeltas } from './daily.js';
import { addDeltas, applyLine, buildReport, countState, dedupeLines, deletionEvent, zeroDeltas, type Change, type CounterDeltas, type Outcome, type SubscriberState } from './rules.js';
import { compareKeys, counterWrites, type RangeSkips, readCounters, readSortedSubscribers, readSubscribers, toItem, type SubscriberItem } from './store.js';
import type { Report, ReportError, SubscriberLine } from './types.js';

/** Items of one lease (see leaseFreeCheck). */
export const LEASE_SHARDS = 16;
/** How long a lease lasts (LIST_LEASE_SECONDS, 60 s): the longest a dead bulk writer blocks its list. */
export const leaseMs = () => config.listLeaseSeconds * 1000;
/** A writer starts no chunk with less than this left on its lease (a third of it, at most 20 s). */
const leaseSafetyMs = () => Math.min(20_000, leaseMs() / 3);
/** A write with a deadline starts no chunk or transaction with less than this left. */
export const CHUNK_MARGIN_MS = 3_000;
/**
 * Subscribers written per transaction; one more item moves a counter shard, one the day's shard of the same
 * index (daily.ts), one is the outbox, one checks the lease: 100, DynamoDB's most.
 */
export const LINES_PER_TRANSACTION = 96;
export const TRANSACTIONS_IN_FLIGHT = 8;
export const MAX_CONFLICT_RETRIES = 12;
/**
 * Lines per bulk chunk (one claim, one read, one journal entry and one S3 object of events besides its BatchWriteItem
 * calls; an import's chunk of its file is one bulk chunk). An import cut into chunks of 200 took 1.46× the raw writes,
 * with 500 1.15–1.2× (bench:imports, 2026-11-25). API requests used 200 until the small writes committed beside the
 * bulk writer (2026-11-27): with the claims, 200 made a 20,000-line POST re-sending a list 1.58× raw, 500 1.38×.
 */
export const BULK_CHUNK_LINES = 500;
/** Bulk chunks in flight per write. */
export const BULK_CHUNKS_IN_FLIGHT = 8;
/**
 * BatchWriteItem calls in flight under one hold, shared by the chunks of every write joined to it: as many as the raw
 * baseline's. With 4 per chunk and no cap (up to 32 for one write), DynamoDB Local spent about 5 % more CPU on the
 * same import (2026-11-27, 30,000-line A/B with small writes, docs/benchmarks.md); in AWS a list's partition takes
 * ≈ 1,000 lines a second (docs/capacity.md), which 8 calls of 25 items keep up with.
 */
const BULK_CALLS_IN_FLIGHT = 8;
/** BatchWriteItem calls in flight per chunk, within the hold's BULK_CALLS_IN_FLIGHT (a chunk alone gets its 4). */
const BULK_CALLS_PER_CHUNK = 4;
/** Sweep mark partitions. */
const SWEEP_SHARDS = 8;
/** The sweeper leaves an outbox entry younger than this to its live writer. */
const OUTBOX_AGE_MS = 10_000;

/* ------------------------------------------------------------------ events */

/**
 * Stores event records under a name (idempotent: the same name rewrites the
 * same objects); shared/events/record.ts recordEventsOnce. Handed in by the
 * caller, so a path that changes no subscription (the opt-in form's update)
 * does not bundle the event store; such a path still takes a dead writer's
 * lease over: the settled entries' events go to an outbox entry, which the
 * sweeper stores.
 */
export type RecordEvents = (clientId: string, records: EventRecord[], name: string) => Promise<void>;

/**
 * The name events are stored under: derived from the lines' opIds when they
 * all carry one (a retry of the same lines rebuilds the same events under
 * the same name), else from the entry that carries them.
 */
function eventsName(lines: SubscriberLine[], entryId: string): string {
  if (lines.length > 0 && lines.every((l) => l.opId !== undefined)) {
    return `ops-${createHash('sha256').update(lines.map((l) => l.opId).join('\n')).digest('hex').slice(0, 40)}`;
  }
  return `w-${entryId.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/**
 * Stores events under `name` (idempotent: the same name rewrites the same
 * objects). Lines with opIds get one attempt (their caller retries the
 * lines); others three retries, then the events go to the log (addresses
 * hashed) and an EventsNotStoredError says so: their journal or outbox
 * entry stays for the sweeper.
 */
async function storeEvents(record: RecordEvents | undefined, clientId: string, events: EventRecord[], name: string, retries: boolean, applied: number): Promise<void> {
  if (events.length === 0) return;
  if (!record) throw new Error('a write that changed subscriptions has no event store');
  for (let attempt = 0; ; attempt++) {
    try {
      await record(clientId, events, name);
      return;
    } catch (err) {
      if (!retries) throw err;
      if (attempt < 3) {
        await sleep(backoffMs(attempt + 2));
        continue;
      }
      logger.error('events not stored', { error: err as Error, events: events.map(({ email, ...rest }) => ({ ...rest, emailHash: hashForLog(email) })) });
      throw new EventsNotStoredError(applied, events.length, { cause: err });
    }
  }
}

/* ------------------------------------------------------------- sweep marks */

const sweepShard = (clientId: string, listId: number) => createHash('sha256').update(`${clientId}#${listId}`).digest()[0] % SWEEP_SHARDS;

/** Tells the sweeper to look at the list's writer partition (written before any lease, journal or outbox entry). */
async function markForSweep(clientId: string, listId: number): Promise<void> {
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.writerSweepMark(clientId, listId, sweepShard(clientId, listId)), clientId, listId, at: Date.now() } }));
}

/* ------------------------------------------------------------------- lease */

interface LeaseItem {
  sk: string;
  owner?: string;
  expiresAt?: number;
  /** Transactional writes counted on this shard. */
  w?: number;
  /** Leases taken (each acquisition adds 1 to every shard). */
  g?: number;
}

/** The item that fails a transaction while a bulk writer holds the list (one random shard), and counts the write there. */
function leaseFreeCheck(clientId: string, listId: number) {
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

/* ------------------------------------------------------------------ flight */

/**
 * The flight item (keys.listWriterFlight): while a bulk writer holds the list, `holder` is its owner and `gen` its
 * generation (shard 0's `g`); `openUntil` (its lease's end) is set once it lets transactions commit beside it;
 * `claims` holds the tags of the addresses its chunks are writing now (claimed before their read, taken back once
 * their items landed), one string of 5-character tags; `landed` the writeIds of the journal entries whose items all
 * landed (marked as their claims are taken back: their settle counts every line, even where a later write replaced
 * the stamped item); `b` counts the transactions that committed beside a bulk writer (the address filter's
 * knowledge, members.ts, must see them). The holder writes `claims`, `landed` and `openUntil` whole, one update at a
 * time (syncFlight): an update rewrites the state the hold has now.
 *
 * Before 2026-11-28 holders kept the claims in a string set `f` (ADD and DELETE of each chunk's tags) and opened the
 * item with `until`. On DynamoDB Local each ADD or DELETE of 500 tags on a set of 3,500 took 7.6 ms of CPU, as much
 * as three BatchWriteItem calls of the chunk, against 3.3 ms for a SET of the whole 20 KB string (docs/benchmarks.md,
 * fourteenth session). A holder of either kind lets in only transactions of its own kind (`until` or `openUntil`), so
 * while both kinds run (a deployment) a transaction waits for the other kind's release instead of committing beside
 * it; takeFlight removes what a holder of the old kind left.
 */
interface FlightItem {
  holder?: string;
  openUntil?: number;
  gen?: number;
  claims?: string;
  landed?: Set<string>;
  b?: number;
  /** When a transaction last asked the holder to let it commit beside (the holder then opens the item: `openUntil`). */
  wantAt?: number;
}

/**
 * An address's tag in the flight item: 30 bits of its SHA-256, 5 characters. A collision only makes a small write
 * wait for a chunk: with 4,000 addresses in flight, one write in 270,000 (the claims string is the tags one after
 * another, so a tag may also match across two of them, at four more places per tag: as harmless). With 8 chunks of 500 in flight, two of them
 * share a tag about once per 600 chunks claimed: the hold counts its claims per tag (Hold.claimedTags), so that one
 * chunk's claims back do not free the other's address. The item holds one tag per address in flight: ≈ 20 KB for 8
 * chunks of 500 (8 characters took 32 KB).
 */
const flightTag = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 5);

/**
 * The item of a transaction that commits beside a bulk writer: counts itself on the flight item (`b`), conditioned
 * on a live holder that lets transactions in (`until`) and whose chunks in flight claim none of `tags`.
 */
function besideCheck(clientId: string, listId: number, tags: string[]) {
  const values: Record<string, unknown> = { ':one': 1, ':now': Date.now() };
  tags.forEach((tag, i) => (values[`:t${i}`] = tag));
  return {
    Update: {
      TableName: tableName(),
      Key: keys.listWriterFlight(clientId, listId),
      UpdateExpression: 'ADD #b :one',
      ConditionExpression: ['#u > :now', ...tags.map((_, i) => `NOT contains(#c, :t${i})`)].join(' AND '),
      ExpressionAttributeNames: { '#b': 'b', '#u': 'openUntil', '#c': 'claims' },
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * One update of the list's flight item, tried again on a transaction conflict (a transaction beside the hold on
 * the same item) up to MAX_CONFLICT_RETRIES times; any other error, a refused condition included, is thrown.
 */
async function updateFlight(clientId: string, listId: number, update: Omit<UpdateCommandInput, 'TableName' | 'Key'>): Promise<Record<string, unknown> | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.listWriterFlight(clientId, listId), ...update }));
      return out.Attributes;
    } catch (err) {
      if (!isTransactionConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

/**
 * Takes the flight item for a hold (after a dead writer's journal was settled: its claims stood until then):
 * this holder and generation, no claims, and `openUntil` (transactions may commit beside the hold) only when a
 * transaction asked for it in the last KNOCK_MEMORY_MS; else it is opened when one asks (openBeside).
 * Conditioned on an older generation, so a writer that stalled in acquire cannot take it over a newer holder.
 * Returns `b` as it is now.
 */
async function takeFlight(hold: Hold, generation: number, beside: boolean): Promise<number> {
  let taken: FlightItem | undefined;
  try {
    taken = await updateFlight(hold.clientId, hold.listId, {
      // Also what a holder of the old kind left: its claims set `f` and `until` (FlightItem).
      UpdateExpression: beside ? 'SET #h = :o, #u = :u, #g = :g ADD #b :zero REMOVE #c, #l, #f, #ou' : 'SET #h = :o, #g = :g ADD #b :zero REMOVE #c, #l, #u, #f, #ou',
      ConditionExpression: 'attribute_not_exists(#g) OR #g < :g',
      ExpressionAttributeNames: { '#h': 'holder', '#u': 'openUntil', '#g': 'gen', '#c': 'claims', '#l': 'landed', '#b': 'b', '#f': 'f', '#ou': 'until' },
      ExpressionAttributeValues: { ':o': hold.owner, ':g': generation, ':zero': 0, ...(beside ? { ':u': hold.expiresAt } : {}) },
      ReturnValues: 'ALL_NEW',
    });
  } catch (err) {
    if (isConditionFailure(err)) throw new ListLeaseLostError('another writer took the list over');
    throw err;
  }
  hold.generation = generation;
  hold.flightTaken = true;
  hold.open = beside;
  return Number(taken?.b ?? 0);
}

/** How often a hold that lets no transaction beside it reads the flight item for a knock (at a chunk's start). */
const KNOCK_POLL_MS = 100;
/** A knock this recent opens the next holds from their start. */
const KNOCK_MEMORY_MS = 10_000;
const knocked = (flight: FlightItem | undefined) => Date.now() - Number(flight?.wantAt ?? 0) < KNOCK_MEMORY_MS;

/**
 * For a hold that lets no transaction beside it, at a chunk's start and on a timer: reads the flight item (at
 * most every KNOCK_POLL_MS) and opens it to transactions beside the hold when one knocked. A chunk starting
 * while it opens waits for it (to know whether its addresses were claimed).
 */
async function heedKnocks(hold: Hold): Promise<void> {
  // A poisoned hold is never opened: a chunk of it may have landed items that only their stamps account for.
  if (hold.open || hold.poisoned) return clearInterval(hold.knockTimer);
  if (hold.opening) return hold.opening;
  if (Date.now() - hold.knockCheckedAt < KNOCK_POLL_MS) return;
  hold.knockCheckedAt = Date.now();
  const flight = await readFlight(hold.clientId, hold.listId);
  if (hold.open || hold.opening || hold.poisoned) return hold.opening;
  if (knocked(flight)) await openBeside(hold);
}

/**
 * Lets transactions commit beside the hold from now on (the flight item's `openUntil`), in one update with the
 * claims of every chunk in flight under it and the landed marks of every entry it already wrote: from the moment
 * a transaction can commit beside the hold, no address a chunk is writing is free, and no entry whose items a
 * transaction may now rewrite needs its stamps to be settled. After a failure the update may or may not have been
 * applied, so the hold counts as open all the same (its chunks claim from then on, and the next update writes the
 * whole state again: safe either way; at worst transactions wait for the release).
 */
function openBeside(hold: Hold): Promise<void> {
  hold.opening ??= (async () => {
    for (const chunk of hold.flying) {
      if (!chunk.claimed) countClaims(hold, chunk.tags);
      chunk.claimed = true;
    }
    for (const entry of hold.journals) hold.landed.add(entry.writeId);
    hold.open = true;
    clearInterval(hold.knockTimer);
    try {
      await syncFlight(hold);
    } catch (err) {
      // Not this holder's item any more (its lease was taken over): nothing commits beside it; else, maybe applied.
      logger.warn('flight item not opened', { clientId: hold.clientId, listId: hold.listId, error: err as Error });
    }
  })();
  return hold.opening;
}

/** For a transaction waiting on a hold that lets none beside it: asks the holder to (the flight item's `wantAt`). */
async function knock(clientId: string, listId: number): Promise<void> {
  await ddb
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.listWriterFlight(clientId, listId),
        UpdateExpression: 'SET #w = :now',
        ExpressionAttributeNames: { '#w': 'wantAt' },
        ExpressionAttributeValues: { ':now': Date.now() },
      }),
    )
    .catch(() => undefined); // a conflict or a fault: the next poll knocks again
}

/**
 * Claims a chunk's addresses before it reads them: from now on no transaction of them commits beside this hold
 * (settles once an update of the flight item carrying them committed; syncFlight).
 */
async function claim(hold: Hold, tags: string[]): Promise<void> {
  countClaims(hold, tags);
  await syncFlight(hold);
}

/**
 * Takes a chunk's claims back once its items landed, and marks its journal entry (`writeId`) landed in the same
 * update. False when that update failed: the claims then stand, with the entry not marked landed, until an update
 * of the hold succeeds (it writes both) or the release.
 */
async function unclaim(hold: Hold, tags: string[], writeId: string | undefined): Promise<boolean> {
  uncountClaims(hold, tags);
  if (writeId) hold.landed.add(writeId);
  try {
    await syncFlight(hold);
    return true;
  } catch (err) {
    if (!(err instanceof ListLeaseLostError)) logger.warn('flight claims not taken back', { clientId: hold.clientId, listId: hold.listId, error: err as Error });
    return false;
  }
}

/**
 * Brings the flight item to the hold's state as it is now (its claims, landed marks, and `openUntil` once open),
 * conditioned on this holder: settles once an update carrying that state, or a later one, committed. One update at
 * a time per hold, each the whole state (SET, not ADD or DELETE of tags): changes made while one is on its way go
 * together in the next, and no update can land after a later one. An update that fails fails the calls it carried;
 * the next one writes their changes again. With an address filter, the update also checks that no transaction
 * committed beside the hold since it took the item (`b`): one that did may have added an address the filter rules
 * out, so the filter is dropped (the chunks claimed from then on read) and the update goes again without the check.
 * ListLeaseLostError when the item is another holder's.
 */
function syncFlight(hold: Hold): Promise<void> {
  const version = ++hold.flightVersion;
  const done = new Promise<void>((resolve, reject) => hold.flightWaiters.push({ version, resolve, reject }));
  pumpFlight(hold);
  return done;
}

function pumpFlight(hold: Hold): void {
  if (hold.flightWriting || hold.flightWaiters.length === 0) return;
  hold.flightWriting = (async () => {
    const version = hold.flightVersion;
    let failure: unknown;
    try {
      await writeFlightState(hold);
    } catch (err) {
      failure = err;
    }
    const carried = hold.flightWaiters.filter((w) => w.version <= version);
    hold.flightWaiters = hold.flightWaiters.filter((w) => w.version > version);
    for (const waiter of carried) {
      if (failure === undefined) waiter.resolve();
      else waiter.reject(failure);
    }
    hold.flightWriting = undefined;
    pumpFlight(hold);
  })();
}

/** One update of the flight item to the hold's state (claims, landed marks, `openUntil`): see syncFlight. */
async function writeFlightState(hold: Hold): Promise<void> {
  for (;;) {
    const claims = [...hold.claimedTags.keys()].join('');
    const landed = [...hold.landed];
    const checkBeside = hold.filter !== undefined;
    const sets = [...(claims ? ['#c = :c'] : []), ...(landed.length > 0 ? ['#l = :l'] : []), ...(hold.open ? ['#u = :u'] : [])];
    const removes = [...(claims ? [] : ['#c']), ...(landed.length > 0 ? [] : ['#l'])];
    try {
      await updateFlight(hold.clientId, hold.listId, {
        UpdateExpression: [...(sets.length > 0 ? [`SET ${sets.join(', ')}`] : []), ...(removes.length > 0 ? [`REMOVE ${removes.join(', ')}`] : [])].join(' '),
        ConditionExpression: checkBeside ? '#h = :o AND #b = :b' : '#h = :o',
        ExpressionAttributeNames: { '#h': 'holder', '#c': 'claims', '#l': 'landed', ...(hold.open ? { '#u': 'openUntil' } : {}), ...(checkBeside ? { '#b': 'b' } : {}) },
        ExpressionAttributeValues: {
          ':o': hold.owner,
          ...(claims ? { ':c': claims } : {}),
          ...(landed.length > 0 ? { ':l': new Set(landed) } : {}),
          ...(hold.open ? { ':u': hold.expiresAt } : {}),
          ...(checkBeside ? { ':b': hold.beside } : {}),
        },
      });
      return;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const flight = await readFlight(hold.clientId, hold.listId);
      if (!checkBeside || flight?.holder !== hold.owner) throw new ListLeaseLostError('another writer took the list over');
      hold.filter = undefined;
    }
  }
}

/** Counts a chunk's tags as claimed under its hold, before the update that claims them. */
function countClaims(hold: Hold, tags: string[]): void {
  for (const tag of tags) hold.claimedTags.set(tag, (hold.claimedTags.get(tag) ?? 0) + 1);
}

/** Uncounts a chunk's tags: a tag stays claimed while another claimed chunk of the hold holds it. */
function uncountClaims(hold: Hold, tags: string[]): void {
  for (const tag of tags) {
    const left = (hold.claimedTags.get(tag) ?? 0) - 1;
    if (left > 0) hold.claimedTags.set(tag, left);
    else hold.claimedTags.delete(tag);
  }
}

const readFlight = async (clientId: string, listId: number) =>
  (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.listWriterFlight(clientId, listId), ConsistentRead: true }))).Item as FlightItem | undefined;

/** One line's counter delta and events as a journal entry carries them. */
interface JournalLine {
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

/** One process's hold of one list's lease, shared by its concurrent bulk writes. Private to this module. */
class Hold {
  users = 0;
  /** Journal entries settled in full (items and events) under this hold, folded into the counters at release. */
  readonly journals: Array<{ writeId: string; key: Record<string, string>; deltas: CounterDeltas; day: string; daily: DailyDeltas }> = [];
  /** Addresses being written by a chunk under this hold, and the chunk's end. */
  readonly busy = new Map<string, Promise<void>>();
  /** Set when an entry could not be settled: the lease is left to expire, the sweeper settles it. */
  poisoned = false;
  readonly released: Promise<void>;
  markReleased!: () => void;
  seq = 0;
  /**
   * Chunks started under this hold: a chunk's number is its rank for the hold's BatchWriteItem calls (batchCalls),
   * so the oldest chunk in flight is served first and chunks end one after another; first come first served, the
   * chunks in flight ended together, and the next ones claimed and journaled with no write in flight.
   */
  chunksStarted = 0;
  filter?: AddressFilter;
  /** Transactional writes counted on the lease shards (`w`) and beside bulk writers (the flight item's `b`), and shard 0's `g`, read once the lease was taken. */
  seen = { writes: 0, generation: 0 };
  /** The flight item's `b` when this hold opened it (a claim with an address filter checks it has not moved). */
  beside = 0;
  /** Shard 0's `g` once this hold took the lease (the flight item's `gen`). */
  generation = 0;
  /** Set once this hold took the flight item (its release then clears holder, claims and landed marks). */
  flightTaken = false;
  /** Whether transactions may commit beside this hold (the flight item's `openUntil`): then every chunk claims its addresses. */
  open = false;
  /** While the flight item is being opened to them (openBeside): chunks wait for it. */
  opening?: Promise<void>;
  /** The chunks in flight under this hold: their tags, and whether they are claimed. */
  readonly flying = new Set<{ tags: string[]; claimed: boolean }>();
  /**
   * How many claimed chunks of this hold claim each tag. Two addresses in flight may share a tag (flightTag): a
   * chunk's claims back leave out the tags another chunk still claims, or an address being written would be free.
   */
  readonly claimedTags = new Map<string, number>();
  /** The writeIds of the entries whose items all landed, marked so in the flight item since it was opened (`landed`). */
  readonly landed = new Set<string>();
  /** The flight item's writer (syncFlight): changes asked for, the update on its way, and who waits for which change. */
  flightVersion = 0;
  flightWriting?: Promise<void>;
  flightWaiters: Array<{ version: number; resolve: () => void; reject: (err: unknown) => void }> = [];
  /** The chunks' BatchWriteItem calls, BULK_CALLS_IN_FLIGHT at a time, the oldest chunk's first (chunksStarted). */
  readonly batchCalls = limiter(BULK_CALLS_IN_FLIGHT);
  /** When the flight item was last read for a knock. */
  knockCheckedAt = 0;
  /** Reads the flight item for knocks while the hold lets nobody beside it (cleared at release). */
  knockTimer?: NodeJS.Timeout;
  /** Set once a write under this hold was told to stop (shouldStop): nobody joins it any more, it is released when its chunks end. */
  private stopping = false;
  constructor(
    readonly clientId: string,
    readonly listId: number,
    readonly owner: string,
    readonly acquiredAt: number,
    readonly expiresAt: number,
    /** The event store a dead writer's journal is settled with; without it (the form's update) its events go to an outbox entry. */
    readonly record: RecordEvents | undefined,
  ) {
    this.released = new Promise((done) => (this.markReleased = done));
  }
  /**
   * Whether another bulk write of this process may start chunks under this hold. Not once it is stopping: a
   * write joining a stopping hold would leave it at once and try again, a loop of microtasks that keeps the
   * hold's user count above zero (the lease is never released) and starves the I/O of the chunks in flight.
   */
  get joinable() {
    return !this.poisoned && !this.stopping && Date.now() - this.acquiredAt < HOLD_MS;
  }
  /** Throws unless the lease has time left for one more chunk and nothing under it is left unsettled. */
  checkTime(): void {
    if (this.poisoned) throw new ListLeaseLostError('a chunk under this lease could not be settled; the sweeper settles it');
    this.fence();
  }
  /** Throws unless the lease has more than leaseSafetyMs left (checked right before each BatchWriteItem call). */
  fence(): void {
    if (Date.now() > this.expiresAt - leaseSafetyMs()) throw new ListLeaseLostError('the list writer lease is about to expire');
  }
  /** No further chunk starts under this hold, and no write joins it. */
  stop(): void {
    this.stopping = true;
  }
  /** True when no further chunk should start under this hold: its time is up (HOLD_MS), or a chunk could not be settled. */
  shouldStop(): boolean {
    if (this.poisoned || Date.now() - this.acquiredAt >= HOLD_MS) this.stopping = true;
    return this.stopping;
  }
}

/**
 * The one per-container object (all the list writer's process state): this
 * process's holds and lease acquisitions in progress, what it knows of the
 * lists it filled (the address filter, members.ts) and where range reads
 * overflowed (store.ts), by list. Losing it (a new container) costs reads,
 * never correctness.
 */
const container = {
  holds: new Map<string, Hold>(),
  acquiring: new Map<string, Promise<Hold>>(),
  known: new Map() as KnownLists,
  rangeSkips: new Map() as RangeSkips,
  /** Lists this process found populated: no counters read for the address filter (it is for lists filled from empty). */
  populated: new Set<string>(),
  /** When this process last found each list held by a bulk writer (its transactions then try beside it first). */
  heldAt: new Map<string, number>(),
};
const holdKey = (clientId: string, listId: number) => `${clientId}#${listId}`;

/** Runs `work` holding the list's writer lease (shared with this process's bulk writes of the list that started within HOLD_MS). */
async function withListLease<T>(clientId: string, listId: number, deadline: number, record: RecordEvents | undefined, work: (hold: Hold) => Promise<T>): Promise<T> {
  const hold = await joinOrAcquire(clientId, listId, deadline, record);
  hold.users++;
  try {
    return await work(hold);
  } finally {
    hold.users--;
    if (hold.users === 0) await release(hold);
  }
}

async function joinOrAcquire(clientId: string, listId: number, deadline: number, record: RecordEvents | undefined): Promise<Hold> {
  const key = holdKey(clientId, listId);
  for (;;) {
    if (Date.now() > deadline) throw new ListBusyError(clientId, listId);
    let held = container.holds.get(key);
    if (held && Date.now() > held.expiresAt) {
      // Its lease ran out under a stalled chunk (a hung call): the hold no longer holds the list; take the lease anew.
      held.stop();
      container.holds.delete(key);
      held = undefined;
    }
    if (held?.joinable) return held;
    const waitFor = held?.released ?? container.acquiring.get(key);
    if (waitFor) {
      // At most until `deadline` (the loop then gives up).
      await settledOrDeadline(waitFor, deadline);
      continue;
    }
    const attempt = acquire(clientId, listId, deadline, record);
    container.acquiring.set(key, attempt);
    try {
      const hold = await attempt;
      container.holds.set(key, hold);
      return hold;
    } finally {
      container.acquiring.delete(key);
    }
  }
}

const shardIndexes = Array.from({ length: LEASE_SHARDS }, (_, i) => i);

/**
 * Takes the lease (waiting for a live holder, taking over an expired one), then settles any journal a dead writer
 * left and opens the flight item. When that fails, the lease is given back (or, with an entry left unsettled, left
 * to expire for the sweeper).
 */
async function acquire(clientId: string, listId: number, deadline: number, record: RecordEvents | undefined): Promise<Hold> {
  const owner = randomUUID();
  await markForSweep(clientId, listId);
  const takenAt = await takeLease(clientId, listId, owner, deadline);
  const hold = new Hold(clientId, listId, owner, takenAt, takenAt + leaseMs(), record);
  try {
    // One Query of the writer partition: the shards' sums, the flight item, and a dead writer's journal (normally none).
    const partition = await readWriterPartition(clientId, listId);
    const shards = partition.filter((i) => i.sk.startsWith(keys.listWriterShardPrefix())) as unknown as LeaseItem[];
    const flight = partition.find((i) => i.sk === keys.listWriterFlight(clientId, listId).sk) as FlightItem | undefined;
    const dead = partition.filter((i) => i.sk.startsWith(keys.listWriterJournalPrefix())) as unknown as JournalItem[];
    // A dead writer's claims stand until its journal is settled (its stamps are how the settle knows what landed).
    await settleJournal(hold, dead, flight?.landed);
    hold.beside = await takeFlight(hold, Number(shards.find((shard) => shard.sk === keys.listWriterShard(clientId, listId, 0).sk)?.g ?? 0), knocked(flight));
    hold.seen = { writes: shards.reduce((sum, shard) => sum + Number(shard.w ?? 0), 0) + hold.beside, generation: hold.generation };
    hold.filter = await filterForHold(container.known, clientId, listId, hold.seen, async () => {
      const key = holdKey(clientId, listId);
      if (container.populated.has(key)) return false;
      const c = await readCounters(clientId, listId);
      if (c.subscribed + c.unsubscribed === 0) return true;
      container.populated.add(key);
      if (container.populated.size > 1_000) container.populated.delete(container.populated.keys().next().value!);
      return false;
    });
    if (dead.length > 0) {
      logger.warn('list writer journal settled after a writer died', { clientId, listId, entries: dead.length });
      count('ListWriterTakeovers', 1);
    }
    // Knocks are heard every KNOCK_POLL_MS, chunk starts or not (a batch's last chunks may run for a second).
    if (!hold.open) hold.knockTimer = setInterval(() => void heedKnocks(hold).catch(() => undefined), KNOCK_POLL_MS).unref();
    return hold;
  } catch (err) {
    if (!hold.poisoned) await foldJournal(hold, true).catch(() => undefined);
    throw err;
  }
}

/** The lease transaction (its 16 shards), retried until the lease is free or expired or `deadline` passes. Returns when it was taken. */
async function takeLease(clientId: string, listId: number, owner: string, deadline: number): Promise<number> {
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
      return now;
    } catch (err) {
      if (!isTransactionConflict(err)) throw err;
    }
    if (Date.now() > deadline) throw new ListBusyError(clientId, listId);
    await sleep(25 + Math.random() * Math.min(200, 25 * 2 ** attempt));
  }
}

/**
 * How often a transactional writer whose addresses a chunk in flight claims reads the lease and the flight item
 * (two consistent GetItems) before it tries its transaction again: it goes as soon as that chunk is done.
 */
const WAIT_POLL_MS = 25;

/**
 * For a transactional writer that could not commit beside a bulk writer: reads the lease (shard 0) and the
 * flight item every WAIT_POLL_MS or so until its transaction can go, and says how: `false` when no bulk writer
 * holds the list (the lease check), `true` when the holder's chunks in flight claim none of `tags` (beside it).
 * When the holder's lease has expired (it died), takes it over, settles and releases it (with or without the
 * event store: see settleJournal), so a small write never waits for the sweeper behind a dead writer. Throws
 * ListBusyError at `deadline`. Polling with reads, not with the transaction: waiters retrying their transactions
 * every few tens of milliseconds slowed DynamoDB Local's BatchWriteItem calls of the holder's chunks several-fold
 * (issue 31, 2026-11-25).
 */
async function waitForFlight(clientId: string, listId: number, tags: string[], deadline: number, record: RecordEvents | undefined): Promise<boolean> {
  let knockedAt = 0;
  for (;;) {
    const [out, flight] = await Promise.all([
      ddb.send(new GetCommand({ TableName: tableName(), Key: keys.listWriterShard(clientId, listId, 0), ConsistentRead: true })),
      readFlight(clientId, listId),
    ]);
    const shard = out.Item as LeaseItem | undefined;
    if (!shard?.owner) return false;
    if ((shard.expiresAt ?? 0) < Date.now()) {
      await withListLease(clientId, listId, deadline, record, () => Promise.resolve());
      return false;
    }
    if (flight?.holder === shard.owner && Number(flight.openUntil ?? 0) > Date.now() && !tags.some((tag) => flight.claims?.includes(tag))) return true;
    if (Date.now() > deadline) throw new ListBusyError(clientId, listId);
    // A holder that lets nobody beside it yet opens the flight item at its next chunk once asked.
    if (flight?.holder === shard.owner && flight.openUntil === undefined && Date.now() - knockedAt > 1_000) {
      knockedAt = Date.now();
      await knock(clientId, listId);
    }
    await sleep(Math.min(WAIT_POLL_MS * (0.75 + Math.random() / 2), Math.max(0, deadline - Date.now())));
  }
}

/**
 * Folds the hold's settled journal entries and removes the owner and the flight item's holder and claims (unless
 * an entry is left unsettled: then the lease is left to expire). The hold stays this process's hold of the list
 * until then (not joinable): the process's other bulk writes of the list wait for `released`.
 */
async function release(hold: Hold): Promise<void> {
  const key = holdKey(hold.clientId, hold.listId);
  hold.stop();
  clearInterval(hold.knockTimer);
  try {
    if (hold.poisoned) return;
    // After the flight item's last update (an opening begun by the knock timer may still be on its way).
    await hold.opening;
    while (hold.flightWriting) await hold.flightWriting;
    await foldJournal(hold, true);
    if (hold.filter) keepKnowledge(container.known, hold.clientId, hold.listId, { filter: hold.filter, ...hold.seen });
  } catch (err) {
    // Left to expire: the sweeper settles the journal (nothing is lost, the list waits out the lease).
    hold.poisoned = true;
    logger.warn('list writer lease not released', { clientId: hold.clientId, listId: hold.listId, error: err as Error });
  } finally {
    if (container.holds.get(key) === hold) container.holds.delete(key);
    hold.markReleased();
  }
}

/** Waits until none of `emails` is being written under this hold, then marks them busy until `done` settles. */
async function claimAddresses(hold: Hold, emails: string[], done: Promise<unknown>): Promise<void> {
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

/* ----------------------------------------------------------------- journal */

/** Entries and their distinct days folded per transaction (with the lease check and the counter shard: 100 items). */
const FOLD_BATCH = 98;
/** Entries and their distinct days folded in the release's transaction (with the 16 lease shards' updates, the flight item's and the counter shard). */
const FOLD_WITH_RELEASE = 100 - LEASE_SHARDS - 2;

/** How many of `entries`, from the first, fit in `room` transaction items: one each, plus one per distinct day (its day shard). */
function foldable(entries: Array<{ day: string }>, room: number): number {
  const days = new Set<string>();
  let n = 0;
  for (const entry of entries) {
    const more = days.has(entry.day) ? 1 : 2;
    if (n + days.size + more > room) break;
    days.add(entry.day);
    n++;
  }
  return n;
}

interface JournalItem {
  writeId: string;
  /** The lines (encodeLine, one per row) gzipped; a string in entries written before 2026-11-25. */
  lines?: string | Uint8Array;
  /** The chunk's events (EventRecord[]) as gzipped JSON. */
  events?: Uint8Array;
  eventsName?: string;
  /** The UTC day of the chunk's changes (its day shard, daily.ts); absent in entries written before 2026-11-26 (then: the day settled). */
  day?: string;
}

/** Events as a journal or outbox entry keeps them: gzipped JSON (about a fifth of the JSON's write units). */
const packEvents = (events: EventRecord[]) => gzipSync(JSON.stringify(events));
const unpackEvents = (packed: Uint8Array | undefined): EventRecord[] => (packed ? (JSON.parse(gunzipSync(packed).toString()) as EventRecord[]) : []);

/** Records a chunk's deltas and events in a journal entry before its items are written (one PutItem). Returns the writeId. */
async function journalChunk(hold: Hold, lines: JournalLine[], events: EventRecord[], day: string, name: (writeId: string) => string): Promise<{ writeId: string; eventsName: string }> {
  hold.checkTime();
  const writeId = `${hold.owner}#${String(++hold.seq).padStart(9, '0')}`;
  const key = keys.listWriterJournal(hold.clientId, hold.listId, writeId);
  const entryName = name(writeId);
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...key, writeId, lines: gzipSync(lines.map(encodeLine).join('\n')), events: packEvents(events), eventsName: entryName, day } }));
  return { writeId, eventsName: entryName };
}

/** The transaction item that fails unless `hold` still holds its lease (one random shard). */
function leaseHeldCheck(hold: Hold) {
  return {
    ConditionCheck: {
      TableName: tableName(),
      Key: keys.listWriterShard(hold.clientId, hold.listId, Math.floor(Math.random() * LEASE_SHARDS)),
      ConditionExpression: '#o = :o',
      ExpressionAttributeNames: { '#o': 'owner' },
      ExpressionAttributeValues: { ':o': hold.owner },
    },
  };
}

/**
 * Folds the hold's settled entries into the counters, fenced by the lease; with `release`, the last batch's
 * transaction also frees the lease (its 16 shards' owner removed, each conditioned on this owner): one
 * transaction where a fold and a release took two. A failure poisons the hold.
 */
async function foldJournal(hold: Hold, release = false): Promise<void> {
  for (;;) {
    const last = release && foldable(hold.journals, FOLD_WITH_RELEASE) === hold.journals.length;
    if (!last && hold.journals.length === 0) return;
    const batch = hold.journals.slice(0, foldable(hold.journals, last ? FOLD_WITH_RELEASE : FOLD_BATCH));
    const total = zeroDeltas();
    const days = new Map<string, DailyDeltas>();
    for (const entry of batch) {
      addDeltas(total, entry.deltas);
      addDaily(days.get(entry.day) ?? days.set(entry.day, zeroDaily()).get(entry.day)!, entry.daily);
    }
    const items = [
      ...(last ? releaseUpdates(hold) : [leaseHeldCheck(hold)]),
      ...batch.map((entry) => ({ Delete: { TableName: tableName(), Key: entry.key, ConditionExpression: 'attribute_exists(pk)' } })),
      ...counterWrites(hold.clientId, hold.listId, total, days),
    ];
    for (let attempt = 0; ; attempt++) {
      try {
        await transactWrite(items);
        break;
      } catch (err) {
        const lost = reasonCodes(err)
          .slice(0, last ? LEASE_SHARDS + 1 : 1)
          .includes('ConditionalCheckFailed');
        if (!isTransactionConflict(err) || lost || attempt >= 8) {
          hold.poisoned = true;
          throw err;
        }
        await sleep(backoffMs(attempt));
      }
    }
    hold.journals.splice(0, batch.length);
    if (last) return;
  }
}

/** The release: every lease shard's owner removed, and the flight item's holder, claims and landed marks (once opened), each conditioned on this hold's owner. */
function releaseUpdates(hold: Hold) {
  return [
    ...shardIndexes.map((shard) => ({
      Update: {
        TableName: tableName(),
        Key: keys.listWriterShard(hold.clientId, hold.listId, shard),
        UpdateExpression: 'REMOVE #o, expiresAt',
        ConditionExpression: '#o = :o',
        ExpressionAttributeNames: { '#o': 'owner' },
        ExpressionAttributeValues: { ':o': hold.owner },
      },
    })),
    ...(hold.flightTaken
      ? [
          {
            Update: {
              TableName: tableName(),
              Key: keys.listWriterFlight(hold.clientId, hold.listId),
              UpdateExpression: 'REMOVE #h, #u, #c, #l',
              ConditionExpression: '#h = :o',
              ExpressionAttributeNames: { '#h': 'holder', '#u': 'openUntil', '#c': 'claims', '#l': 'landed' },
              ExpressionAttributeValues: { ':o': hold.owner },
            },
          },
        ]
      : []),
  ];
}

/**
 * Settles journal entries: for each, reads its lines' items; the lines whose
 * item carries the entry's stamp landed (all of them in an entry the flight
 * item lists as `landed`, whose items may have been changed since): their events are stored (under the
 * entry's name) and their deltas added to the counters in one transaction
 * with the entry's deletion, fenced by the hold's lease (a writer that lost
 * its lease settles nothing). Without the event store (a deletion or the
 * form's update taking a dead writer over) the events go into an outbox
 * entry in that same transaction, which the sweeper stores under the same
 * name. Returns the addresses that landed, by writeId. On failure the hold
 * is poisoned (left to expire) and it throws.
 */
async function settleJournal(hold: Hold, entries: JournalItem[], landedIds?: Set<string>): Promise<Map<string, Set<string>>> {
  const landed = new Map<string, Set<string>>();
  try {
    for (const entry of entries) {
      const text = typeof entry.lines === 'string' ? entry.lines : entry.lines ? gunzipSync(entry.lines).toString() : '';
      const lines = text ? text.split('\n').map(decodeLine) : [];
      // A landed entry's items all landed (and its claims were taken back: a later write may have changed them).
      const stamped = landedIds?.has(entry.writeId)
        ? new Set(lines.map((l) => l.email))
        : new Set(
            (await batchGet<SubscriberItem & { writeId?: string }>(lines.map((l) => keys.subscriber(hold.clientId, hold.listId, l.email))))
              .filter((i) => i.writeId === entry.writeId)
              .map((i) => i.email),
          );
      const landedDeltas = zeroDeltas();
      const landedDaily = zeroDaily();
      for (const line of lines) {
        if (!stamped.has(line.email)) continue;
        addDeltas(landedDeltas, line.deltas);
        dailyOfLine(line.deltas, landedDaily);
      }
      const events = unpackEvents(entry.events).filter((e) => stamped.has(e.email));
      const name = entry.eventsName ?? `w-${entry.writeId}`;
      let outbox: Array<Record<string, unknown>> = [];
      if (events.length > 0 && hold.record) await hold.record(hold.clientId, events, name);
      else if (events.length > 0) {
        await markForSweep(hold.clientId, hold.listId);
        // `at` 0: no live writer stores these events; the sweeper's next run does.
        outbox = [{ Put: { TableName: tableName(), Item: { ...keys.listWriterOutbox(hold.clientId, hold.listId, randomUUID()), events: packEvents(events), eventsName: name, at: 0 } } }];
      }
      const items = [
        leaseHeldCheck(hold),
        { Delete: { TableName: tableName(), Key: keys.listWriterJournal(hold.clientId, hold.listId, entry.writeId), ConditionExpression: 'attribute_exists(pk)' } },
        ...counterWrites(hold.clientId, hold.listId, landedDeltas, new Map([[entry.day ?? dayOf(new Date(changeClock.now()).toISOString()), landedDaily]])),
        ...outbox,
      ];
      for (let attempt = 0; ; attempt++) {
        try {
          await transactWrite(items);
          break;
        } catch (err) {
          // Beside small writes to the same counter shard (a conflict): again, unless the lease or the entry is gone.
          if (!isTransactionConflict(err) || reasonCodes(err).includes('ConditionalCheckFailed') || attempt >= 8) throw err;
          await sleep(backoffMs(attempt));
        }
      }
      landed.set(entry.writeId, stamped);
      if (stamped.size < lines.length) count('ListWriterCorrections', 1);
    }
    return landed;
  } catch (err) {
    hold.poisoned = true;
    throw err;
  }
}

/** Every item of a list's writer partition: lease shards, journal and outbox entries, the flight item. */
async function readWriterPartition(clientId: string, listId: number): Promise<Array<{ sk: string } & Record<string, unknown>>> {
  return queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.listWriterPartition(clientId, listId) },
    ConsistentRead: true,
  });
}

/* ---------------------------------------------------------- transactional */

/**
 * Runs a transaction of subscriber writes to `emails` of a list: `build` reads
 * and returns the items (at most 99) and a value; the check is appended here.
 * While no bulk writer holds the list, the check is a lease shard's (free);
 * while one does, the flight item's (none of `emails` claimed by a chunk in
 * flight): the transaction commits beside the bulk writer, or waits for the
 * chunks that write its addresses (taking over an expired lease) until
 * `deadline`, then throws ListBusyError. On a conflict it re-reads and
 * retries (MAX_CONFLICT_RETRIES).
 */
async function transact<T>(
  clientId: string,
  listId: number,
  emails: string[],
  deadline: number,
  record: RecordEvents | undefined,
  build: () => Promise<{ items: Array<Record<string, unknown>>; value: T } | { value: T; items?: undefined }>,
): Promise<T> {
  const tags = [...new Set(emails.map(flightTag))];
  const key = holdKey(clientId, listId);
  // Beside first when this process found the list held a moment ago: a refused lease check costs a transaction.
  let beside = Date.now() - (container.heldAt.get(key) ?? 0) < HELD_MEMORY_MS;
  let built = await build();
  for (let attempt = 0; ; ) {
    if (!built.items || built.items.length === 0) return built.value;
    const items = [...built.items, beside ? besideCheck(clientId, listId, tags) : leaseFreeCheck(clientId, listId)];
    try {
      await transactWrite(items);
      return built.value;
    } catch (err) {
      const codes = reasonCodes(err);
      if (isTransactionConflict(err) && codes[items.length - 1] === 'ConditionalCheckFailed') {
        if (Date.now() > deadline) throw new ListBusyError(clientId, listId);
        if (!beside) {
          // A bulk writer holds the list: try beside it at once. Only the check was refused, so the items
          // (conditioned on the versions read) go again as they are.
          beside = true;
          rememberHeld(key);
          if (codes.slice(0, -1).every((code) => code === 'None')) continue;
        } else {
          beside = await waitForFlight(clientId, listId, tags, deadline, record);
          if (!beside) container.heldAt.delete(key);
        }
        built = await build();
        continue;
      }
      if (!isTransactionConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      await sleep(backoffMs(attempt++));
      built = await build();
    }
  }
}

/** How long a process tries beside a bulk writer first after it found the list held. */
const HELD_MEMORY_MS = 10_000;
function rememberHeld(key: string): void {
  container.heldAt.set(key, Date.now());
  if (container.heldAt.size > 1_000) container.heldAt.delete(container.heldAt.keys().next().value!);
}

interface Applied {
  outcomes: Outcome[];
  refused: ReportError[];
  applied: number;
  failure?: unknown;
}

/** Applies one transaction's worth of lines (with their outbox entry), then stores their events. */
async function applyTransaction(clientId: string, listId: number, lines: SubscriberLine[], deadline: number, record: RecordEvents | undefined, acc: Applied): Promise<void> {
  const outboxId = randomUUID();
  const name = eventsName(lines, outboxId);
  let marked = false;
  const result = await transact(clientId, listId, lines.map((l) => l.email), deadline, record, async () => {
    const current = await readSubscribers(
      clientId,
      listId,
      lines.map((l) => l.email),
    );
    const now = new Date(changeClock.now()).toISOString();
    const deltas = zeroDeltas();
    const daily = zeroDaily();
    const outcomes: Outcome[] = [];
    const events: EventRecord[] = [];
    const refused: ReportError[] = [];
    const writes: Array<Record<string, unknown>> = [];
    for (const line of lines) {
      const prior = current.get(line.email);
      const change = applyLine(prior, line, now, listId);
      if (change.refused) {
        refused.push({ line: line.line, email: line.email, cause: change.refused });
        continue;
      }
      outcomes.push(change.outcome);
      events.push(...change.events);
      addDeltas(deltas, change.deltas);
      dailyOfLine(change.deltas, daily);
      if (change.next) {
        writes.push({
          Put: {
            TableName: tableName(),
            Item: toItem(clientId, listId, change.next),
            ConditionExpression: prior ? '#v = :v' : 'attribute_not_exists(pk)',
            ExpressionAttributeNames: prior ? { '#v': 'version' } : undefined,
            ExpressionAttributeValues: prior ? { ':v': prior.version } : undefined,
          },
        });
      }
    }
    const value = { outcomes, events, refused, outbox: false };
    if (writes.length === 0) return { value };
    const outbox = events.length > 0 ? [outboxPut(clientId, listId, outboxId, events, name)] : [];
    if (outbox.length > 0 && !marked) {
      await markForSweep(clientId, listId);
      marked = true;
    }
    return { items: [...writes, ...counterWrites(clientId, listId, deltas, new Map([[dayOf(now), daily]])), ...outbox], value: { ...value, outbox: outbox.length > 0 } };
  });
  acc.outcomes.push(...result.outcomes);
  acc.refused.push(...result.refused);
  acc.applied += lines.length;
  count('SubscribersApplied', lines.length);
  // A failure here leaves the outbox entry: the sweeper stores the events.
  await storeEvents(record, clientId, result.events, name, lines.some((l) => l.opId === undefined), lines.length);
  if (result.outbox) await dropOutbox(clientId, listId, outboxId);
}

/** A transaction's outbox entry (written in the transaction: its events exist exactly when its writes do). */
function outboxPut(clientId: string, listId: number, outboxId: string, events: EventRecord[], name: string) {
  return { Put: { TableName: tableName(), Item: { ...keys.listWriterOutbox(clientId, listId, outboxId), events: packEvents(events), eventsName: name, at: Date.now() } } };
}

/** Deletes an outbox entry whose events were stored. Left behind, the entry is only swept later (its events are stored under the same name again). */
async function dropOutbox(clientId: string, listId: number, outboxId: string): Promise<void> {
  await ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.listWriterOutbox(clientId, listId, outboxId) })).catch((err: unknown) => {
    logger.warn('outbox entry not deleted', { clientId, listId, error: err as Error });
  });
}

/**
 * Deletes the subscribers of one list among `emails` (at most LINES_PER_TRANSACTION; read by key, strongly
 * consistent, so an address written a moment ago is seen) in one transaction behind any bulk writer: the items
 * (conditioned on the versions read), the counter shard, and an outbox entry with one `nl_delete` record per
 * subscription deleted (rules.ts deletionEvent). Then stores the records under the entry's name (the change feed
 * makes them `subscriber.deleted`) and drops the entry, as a write's events. A deletion and its record go
 * together: a crash after the transaction leaves the entry, which the sweeper stores under the same name (same
 * objects, same event ids); an address already gone makes none, so a repeated deletion sends nothing. Records
 * that cannot be stored (after retries) wait in the entry for the sweeper; the deletion is complete, so that
 * does not fail it. Returns the items deleted.
 */
export async function deleteSubscribers(clientId: string, listId: number, emails: string[], deadline: number, record: RecordEvents): Promise<SubscriberItem[]> {
  if (emails.length > LINES_PER_TRANSACTION) throw new Error(`a deletion transaction takes at most ${LINES_PER_TRANSACTION} addresses, got ${emails.length}`);
  const outboxId = randomUUID();
  const name = eventsName([], outboxId);
  let marked = false;
  const result = await transact(clientId, listId, emails, deadline, record, async () => {
    const current = [...(await readSubscribers(clientId, listId, emails)).values()];
    if (current.length === 0) return { value: { deleted: current, events: [] as EventRecord[] } };
    const now = new Date(changeClock.now()).toISOString();
    const deltas: CounterDeltas = zeroDeltas();
    const events = current.map((item) => {
      countState(deltas, item, -1);
      return deletionEvent(item, listId, now);
    });
    const deletes = current.map((item) => ({
      Delete: {
        TableName: tableName(),
        Key: keys.subscriber(clientId, listId, item.email),
        ConditionExpression: '#v = :v',
        ExpressionAttributeNames: { '#v': 'version' },
        ExpressionAttributeValues: { ':v': item.version },
      },
    }));
    if (!marked) {
      await markForSweep(clientId, listId);
      marked = true;
    }
    const counters = counterWrites(clientId, listId, deltas, new Map([[dayOf(now), dailyOfDeletions(current)]]));
    return { items: [...deletes, ...counters, outboxPut(clientId, listId, outboxId, events, name)], value: { deleted: current, events } };
  });
  if (result.deleted.length === 0) return result.deleted;
  try {
    await storeEvents(record, clientId, result.events, name, true, result.deleted.length);
  } catch (err) {
    // Logged by storeEvents (addresses hashed); the entry stays for the sweeper.
    if (err instanceof EventsNotStoredError) return result.deleted;
    throw err;
  }
  await dropOutbox(clientId, listId, outboxId);
  return result.deleted;
}

/** Applies deduplicated lines in transactions (the path of small writes, which wait at most one bulk chunk). */
async function applyInTransactions(clientId: string, listId: number, unique: SubscriberLine[], deadline: number, record: RecordEvents | undefined): Promise<Applied> {
  const chunks: SubscriberLine[][] = [];
  for (let i = 0; i < unique.length; i += LINES_PER_TRANSACTION) chunks.push(unique.slice(i, i + LINES_PER_TRANSACTION));
  const acc: Applied = { outcomes: [], refused: [], applied: 0 };
  await runPool(chunks, TRANSACTIONS_IN_FLIGHT, async (chunk) => {
    if (acc.failure) return;
    if (Date.now() > deadline - CHUNK_MARGIN_MS && acc.applied > 0) {
      acc.failure ??= new PartialWriteError(acc.applied, unique.length, 'time');
      return;
    }
    try {
      await applyTransaction(clientId, listId, chunk, deadline, record, acc);
    } catch (err) {
      acc.failure ??= err;
    }
  });
  return acc;
}

/* -------------------------------------------------------------------- bulk */

/** A bulk chunk failed after some of its lines landed (those are in `landed`; counters and events match them). */
class ChunkFailure extends Error {
  constructor(
    readonly landed: { outcomes: Outcome[]; count: number },
    override readonly cause: unknown,
  ) {
    super('bulk chunk failed', { cause });
  }
}

/**
 * Writes one bulk chunk under the list's lease: claims its addresses in the
 * flight item (no transaction of them commits beside the hold from then on),
 * reads the current items (those the hold's address filter does not rule
 * out), journals the lines that move a counter or make an event, writes the
 * items with BatchWriteItem stamped with the entry's writeId, stores the
 * chunk's events, then takes the claims back and marks the entry landed
 * (one update of the flight item).
 * When the items cannot all be written, settles the entry (counters and
 * events keep only the lines that landed) and throws a ChunkFailure naming
 * them. Claims stay while an entry's items may have landed and the entry is
 * neither marked landed nor settled (its settle reads the stamps): the
 * release, or the writer that takes an expired lease over, clears them.
 */
async function writeChunk(hold: Hold, lines: SubscriberLine[], record: RecordEvents) {
  const { clientId, listId } = hold;
  hold.checkTime();
  const rank = hold.chunksStarted++;
  await heedKnocks(hold).catch(() => undefined); // a failed read: the hold stays as it was
  // An opening begun meanwhile (by the knock timer) claims only the chunks in flight when it began: this one waits
  // for it, then claims itself.
  if (hold.opening) await hold.opening;
  // Claimed now when transactions may commit beside the hold, else by openBeside if one asks while it is in flight.
  const chunk = { tags: lines.map((l) => flightTag(l.email)), claimed: hold.open };
  const { tags } = chunk;
  hold.flying.add(chunk);
  let unclaimable = true;
  try {
    if (chunk.claimed) await claim(hold, tags);
    const filter = hold.filter;
    const toRead = filter ? lines.filter((l) => filter.has(l.email)) : lines;
    const current = toRead.length > 0 ? await readSortedSubscribers(container.rangeSkips, clientId, listId, toRead.map((l) => l.email)) : new Map<string, SubscriberState>();
    const now = new Date(changeClock.now()).toISOString();
    const day = dayOf(now);
    const refused: ReportError[] = [];
    const changes: Array<{ line: SubscriberLine; change: Change }> = [];
    for (const line of lines) {
      const change = applyLine(current.get(line.email), line, now, listId);
      if (change.refused) refused.push({ line: line.line, email: line.email, cause: change.refused });
      else changes.push({ line, change });
    }
    const journaled = changes.filter(({ change }) => change.events.length > 0 || Object.values(change.deltas).some((n) => n !== 0));
    const events = journaled.flatMap(({ change }) => change.events);
    const entry =
      journaled.length > 0
        ? await journalChunk(
            hold,
            journaled.map(({ line, change }) => ({ email: line.email, deltas: change.deltas })),
            events,
            day,
            (writeId) => eventsName(lines, writeId),
          )
        : undefined;
    const written = changes.filter(({ change }) => change.next);
    if (filter) for (const { line } of written) filter.add(line.email);
    if (entry) unclaimable = false;
    try {
      // The fence: no BatchWriteItem call (a retry included) starts with less than leaseSafetyMs left on the lease,
      // however long this writer was paused since its journal entry (see "Fencing" in docs/architecture.md).
      await batchWrite(
        written.map(({ change }) => ({ PutRequest: { Item: { ...toItem(clientId, listId, change.next!), ...(entry ? { writeId: entry.writeId } : {}) } } })),
        { concurrency: BULK_CALLS_PER_CHUNK, slot: (call) => hold.batchCalls(call, rank), beforeCall: () => hold.fence() },
      );
    } catch (err) {
      // Which items landed: this writer holds the list, so an item at the version it wrote is its own.
      const after = await batchGet<SubscriberItem>(written.map(({ line }) => keys.subscriber(clientId, listId, line.email))).catch(() => undefined);
      if (!after) {
        hold.poisoned = true; // the sweeper settles the journal entry
        throw err;
      }
      if (entry) {
        const entryItem = { writeId: entry.writeId, lines: journaled.map(({ line, change }) => encodeLine({ email: line.email, deltas: change.deltas })).join('\n'), events: packEvents(events), eventsName: entry.eventsName, day };
        await settleJournal(hold, [entryItem]);
        unclaimable = true;
      }
      const versions = new Map(after.map((i) => [i.email, i.version]));
      const landed = written.filter(({ change }) => versions.get(change.next!.email) === change.next!.version);
      throw new ChunkFailure({ outcomes: landed.map(({ change }) => change.outcome), count: landed.length }, err);
    }
    if (entry) {
      // Every item landed: the claims go back with the entry marked landed (one update), while the events are
      // stored (a writer that dies before they are has its landed entry settled: all its lines and events).
      const claimedBefore = chunk.claimed;
      const [, stored] = await Promise.allSettled([
        claimedBefore ? unclaim(hold, tags, entry.writeId) : Promise.resolve(true),
        storeEvents(record, clientId, events, entry.eventsName, lines.some((l) => l.opId === undefined), lines.length),
      ]);
      if (stored.status === 'rejected') {
        hold.poisoned = true; // the entry stays: the sweeper stores its events and counts it after the lease expires
        throw new ChunkFailure({ outcomes: changes.map(({ change }) => change.outcome), count: lines.length }, stored.reason);
      }
      // In one turn of the event loop: an openBeside from now on marks the entry landed instead of claiming the chunk.
      hold.journals.push({
        writeId: entry.writeId,
        key: keys.listWriterJournal(clientId, listId, entry.writeId),
        deltas: journaled.reduce((t, { change }) => (addDeltas(t, change.deltas), t), zeroDeltas()),
        day,
        daily: journaled.reduce((t, { change }) => dailyOfLine(change.deltas, t), zeroDaily()),
      });
      hold.flying.delete(chunk);
      if (chunk.claimed && !claimedBefore) {
        // openBeside claimed it meanwhile: its claims go back (after that update) with the entry marked landed.
        await hold.opening;
        await unclaim(hold, tags, entry.writeId);
      }
    }
    return { outcomes: changes.map(({ change }) => change.outcome), refused, count: lines.length };
  } finally {
    hold.flying.delete(chunk);
    if (unclaimable && chunk.claimed && !hold.poisoned) {
      await hold.opening;
      await unclaim(hold, tags, undefined);
    }
  }
}

/**
 * Applies deduplicated lines in bulk chunks, in short holds of the list's
 * lease (HOLD_MS, or less when a transactional writer waits).
 */
async function applyBulk(
  clientId: string,
  listId: number,
  unique: SubscriberLine[],
  deadline: number,
  record: RecordEvents | undefined,
  chunkLines = BULK_CHUNK_LINES,
): Promise<Applied> {
  if (!record) throw new Error('a bulk write needs the event store');
  // Sorted by address, each chunk is one key range of the list (readSortedSubscribers).
  const sorted = [...unique].sort((a, b) => compareKeys(a.email, b.email));
  const chunks: SubscriberLine[][] = [];
  for (let i = 0; i < sorted.length; i += chunkLines) chunks.push(sorted.slice(i, i + chunkLines));
  const acc: Applied = { outcomes: [], refused: [], applied: 0 };
  let next = 0;
  const timeIsUp = () => Date.now() > deadline - CHUNK_MARGIN_MS;
  while (next < chunks.length && !acc.failure) {
    if (timeIsUp()) {
      acc.failure = new PartialWriteError(acc.applied, unique.length, 'time');
      break;
    }
    try {
      await withListLease(clientId, listId, Math.min(deadline, Date.now() + LEASE_WAIT_MS), record, async (hold) => {
        await runPool(Array.from({ length: BULK_CHUNKS_IN_FLIGHT }), BULK_CHUNKS_IN_FLIGHT, async () => {
          while (!acc.failure && next < chunks.length) {
            if (hold.shouldStop()) return;
            if (timeIsUp() || acc.failure || next >= chunks.length) return;
            const chunk = chunks[next++];
            let finish!: () => void;
            const done = new Promise<void>((resolve) => (finish = resolve));
            try {
              await claimAddresses(
                hold,
                chunk.map((l) => l.email),
                done,
              );
              const result = await traced('### list writer chunk', () => writeChunk(hold, chunk, record));
              acc.outcomes.push(...result.outcomes);
              acc.refused.push(...result.refused);
              acc.applied += result.count;
              count('SubscribersApplied', result.count);
            } catch (err) {
              if (err instanceof ChunkFailure) {
                acc.outcomes.push(...err.landed.outcomes);
                acc.applied += err.landed.count;
              }
              acc.failure ??= err instanceof ChunkFailure ? err.cause : err;
            } finally {
              finish();
            }
          }
        });
      });
    } catch (err) {
      acc.failure ??= err;
    }
  }
  return acc;
}

/* ------------------------------------------------------------------ entry */

export interface WriteOptions {
  /** Epoch ms by which the write must answer: no chunk starts within CHUNK_MARGIN_MS of it. */
  deadline?: number;
  /** The event store (required for a write that may change subscriptions, and for any bulk write). */
  record?: RecordEvents;
}

/**
 * Applies validated lines to one list (the last line of an address wins):
 * exact counters, one nl_subscribe / nl_unsubscribe event per state change
 * stored with the chunk that applies it. Returns the report (errors: the
 * lines refused by the rules). Throws ListBusyError when nothing could be
 * applied behind another writer, PartialWriteError (or StorageBugError)
 * with the applied count when it stopped part-way, EventsNotStoredError
 * when everything was applied but some events wait for the sweeper.
 */
export function applyLines(clientId: string, listId: number, lines: SubscriberLine[], o: WriteOptions = {}): Promise<Report> {
  const deadline = o.deadline ?? Number.POSITIVE_INFINITY;
  return settle(lines, (unique) =>
    unique.length <= LINES_PER_TRANSACTION
      ? applyInTransactions(clientId, listId, unique, deadline, o.record)
      : applyBulk(clientId, listId, unique, deadline, o.record),
  );
}

/**
 * Like applyLines, always on the bulk path (the import worker: its chunks
 * hold the list's lease whatever their size, and its bundle leaves the
 * transactional path out). `chunkLines`: lines per bulk chunk
 * (BULK_CHUNK_LINES by default; the worker makes each chunk of its file,
 * of that size, one bulk chunk).
 */
export function applyLinesInBulk(clientId: string, listId: number, lines: SubscriberLine[], record: RecordEvents, chunkLines?: number): Promise<Report> {
  return settle(lines, (unique) => applyBulk(clientId, listId, unique, Number.POSITIVE_INFINITY, record, chunkLines));
}

/** Deduplicates the lines, applies them with `apply`, and turns what happened into the report or a domain error. */
async function settle(lines: SubscriberLine[], apply: (unique: SubscriberLine[]) => Promise<Applied>): Promise<Report> {
  const { unique, duplicateEmails, duplicateGuids } = dedupeLines(lines);
  const bulk = unique.length > LINES_PER_TRANSACTION;
  const { outcomes, refused, applied, failure } = await apply(unique);
  if (failure) {
    if (failure instanceof ListBusyError && applied === 0) throw failure;
    // Everything applied, only events not stored yet: their entries wait for the sweeper. Lines with opIds get the
    // store's own error (their caller retries them); others an EventsNotStoredError.
    if (applied === unique.length && !(failure instanceof PartialWriteError)) {
      if (failure instanceof EventsNotStoredError) throw new EventsNotStoredError(applied, failure.events, { cause: failure.cause });
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- `failure` is what a chunk rejected with: rethrown as it came
      if (!(failure instanceof ListLeaseLostError) && !isDynamoFault(failure)) throw failure;
    }
    if (failure instanceof PartialWriteError) throw new PartialWriteError(applied, unique.length, failure.reason);
    const retryable = failure instanceof ListBusyError || failure instanceof ListLeaseLostError || failure instanceof EventsNotStoredError || isRetryableStorageFault(failure);
    logger.warn('subscriber write failed', { retryable, bulk, applied, total: unique.length, detail: faultDetail(failure), error: failure });
    if (!retryable) throw new StorageBugError(applied, unique.length, { cause: failure });
    throw new PartialWriteError(applied, unique.length, failure instanceof ListBusyError ? 'busy' : 'storage', { cause: failure });
  }
  return buildReport(refused.sort((a, b) => a.line - b.line), unique.length, duplicateEmails, duplicateGuids, outcomes);
}

/** True for an error of a DynamoDB call (a fault of the subscriber state, not of the event store). */
const isDynamoFault = (err: unknown) => err instanceof Error && (err.name.endsWith('Exception') || err.name === 'UnprocessedError');

/** A subscriber of a list as stored, or undefined. */
export async function getSubscriber(clientId: string, listId: number, email: string): Promise<SubscriberItem | undefined> {
  return (await readSubscribers(clientId, listId, [email.trim().toLowerCase()])).get(email.trim().toLowerCase());
}

/* ------------------------------------------------------------------- sweep */

export interface WriterSweep {
  /** Lists whose expired lease was taken over (journal settled, lease released). */
  settled: Array<{ clientId: string; listId: number }>;
  /** Outbox entries whose events were stored. */
  outboxes: number;
  /** Lists a live writer holds. */
  running: number;
}

/**
 * The sweeper's part for list writers (run by the importsSweeper job): for
 * every list with a sweep mark, stores the events of outbox entries older
 * than OUTBOX_AGE_MS, takes over an expired lease (settling its journal)
 * and removes the mark once the list has nothing left and no writer for
 * two leases.
 */
export async function sweepListWriters(record: RecordEvents, now = Date.now()): Promise<WriterSweep> {
  const summary: WriterSweep = { settled: [], outboxes: 0, running: 0 };
  for (let shard = 0; shard < SWEEP_SHARDS; shard++) {
    const marks = await queryAll<{ sk: string; clientId: string; listId: number; at: number }>({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.writerSweepPartition(shard) },
      ConsistentRead: true,
    });
    for (const mark of marks) {
      const { clientId, listId } = mark;
      const partition = await readWriterPartition(clientId, listId);
      let left = false;
      for (const item of partition.filter((i) => i.sk.startsWith(keys.listWriterOutboxPrefix()))) {
        if (Number(item.at ?? 0) > now - OUTBOX_AGE_MS) {
          left = true;
          continue;
        }
        await record(clientId, unpackEvents(item.events as Uint8Array | undefined), String(item.eventsName));
        await ddb.send(new DeleteCommand({ TableName: tableName(), Key: { pk: keys.listWriterPartition(clientId, listId), sk: item.sk } }));
        summary.outboxes++;
      }
      const shard0 = partition.find((i) => i.sk === keys.listWriterShard(clientId, listId, 0).sk) as LeaseItem | undefined;
      const journal = partition.some((i) => i.sk.startsWith(keys.listWriterJournalPrefix()));
      if (shard0?.owner && (shard0.expiresAt ?? 0) >= now) {
        summary.running++;
        continue;
      }
      if (shard0?.owner || journal) {
        // Take the dead writer's lease over: acquiring settles its journal; the release leaves the lease free.
        await withListLease(clientId, listId, Date.now() + LEASE_WAIT_MS, record, () => Promise.resolve());
        summary.settled.push({ clientId, listId });
        continue;
      }
      if (left || mark.at > now - 2 * leaseMs()) continue;
      try {
        await ddb.send(
          new DeleteCommand({
            TableName: tableName(),
            Key: keys.writerSweepMark(clientId, listId, shard),
            ConditionExpression: '#at = :at',
            ExpressionAttributeNames: { '#at': 'at' },
            ExpressionAttributeValues: { ':at': mark.at },
          }),
        );
      } catch (err) {
        if (!isConditionFailure(err)) throw err; // a writer marked it again meanwhile
      }
    }
  }
  return summary;
}
