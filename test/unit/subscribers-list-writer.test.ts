/**
 * The list writer's lease, journal and outbox against an in-memory table
 * (test/helpers/memory-table.ts): no network. A writer is killed by making
 * every call fail from a chosen one on.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keys } from '../../shared/db/keys.js';
import type { EventRecord } from '../../shared/events/types.js';
import { EventsNotStoredError, ListBusyError } from '../../shared/subscribers/errors.js';
import { applyLines, applyLinesInBulk, leaseMs, sweepListWriters } from '../../shared/subscribers/list-writer.js';
import { HOLD_MS } from '../../shared/subscribers/limits.js';
import { changeClock } from '../../shared/subscribers/clock.js';
import { ddb, tableName } from '../../shared/db/client.js';
import type { SubscriberState } from '../../shared/subscribers/rules.js';
import { toItem } from '../../shared/subscribers/store.js';
import { memoryTable } from '../helpers/memory-table.js';

const CLIENT = 'c1';
/** Lines per bulk chunk in these tests: 450 lines make three chunks. */
const CHUNK = 200;
const LIST = 1;
afterEach(() => vi.restoreAllMocks());

function recorder() {
  const stored = new Map<string, EventRecord[]>();
  let failing = false;
  let refused = 0;
  return {
    stored,
    fail: (on: boolean) => (failing = on),
    /** How many stores were refused while failing. */
    refused: () => refused,
    record: (_clientId: string, events: EventRecord[], name: string) => {
      if (failing) return (refused++, Promise.reject(new Error('S3 down')));
      stored.set(name, events);
      return Promise.resolve();
    },
    /** Emails of the stored nl_subscribe events (an object stored twice under one name counts once). */
    subscribed: () => [...stored.values()].flat().filter((e) => e.event === 'nl_subscribe').map((e) => e.email).sort(),
  };
}

const linesOf = (n: number, prefix = 'a') => Array.from({ length: n }, (_, i) => ({ line: i + 1, email: `${prefix}${String(i).padStart(4, '0')}@x.co` }));

function state(table: ReturnType<typeof memoryTable>) {
  const subscribers = table.partition(keys.subscribersPartition(CLIENT, LIST));
  const counted = table.partition(keys.countersPartition(CLIENT, LIST)).reduce((sum, shard) => sum + Number(shard.subscribed ?? 0), 0);
  const writer = table.partition(keys.listWriterPartition(CLIENT, LIST));
  return {
    subscribed: subscribers.filter((s) => s.subscribed).map((s) => String(s.email)).sort(),
    counted,
    journal: writer.filter((i) => String(i.sk).startsWith('J#')).length,
    outbox: writer.filter((i) => String(i.sk).startsWith('E#')).length,
    owner: writer.some((i) => i.owner !== undefined),
  };
}

/** Runs `work` as if `ms` had passed (a dead writer's lease has expired by then). */
async function later<T>(ms: number, work: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  try {
    return await work();
  } finally {
    spy.mockRestore();
  }
}

/**
 * What a list holds against what was counted and recorded: the counters' sums against a recount of the items,
 * and per address the nl_subscribe events less the nl_unsubscribe events (1 for a subscribed address, else 0).
 */
function audit(table: ReturnType<typeof memoryTable>, events: ReturnType<typeof recorder>, list = LIST) {
  const items = table.partition(keys.subscribersPartition(CLIENT, list));
  const shards = table.partition(keys.countersPartition(CLIENT, list));
  const sum = (name: string) => shards.reduce((total, shard) => total + Number(shard[name] ?? 0), 0);
  const net = new Map<string, number>();
  for (const e of [...events.stored.values()].flat()) {
    if (e.email_list_id !== list) continue;
    if (e.event === 'nl_subscribe') net.set(e.email, (net.get(e.email) ?? 0) + 1);
    if (e.event === 'nl_unsubscribe') net.set(e.email, (net.get(e.email) ?? 0) - 1);
  }
  const subscribed = new Set(items.filter((i) => i.subscribed).map((i) => String(i.email)));
  const wrongEvents = [...new Set([...net.keys(), ...subscribed])].filter((email) => (net.get(email) ?? 0) !== (subscribed.has(email) ? 1 : 0));
  return {
    counted: { subscribed: sum('subscribed'), unsubscribed: sum('unsubscribed') },
    recount: { subscribed: subscribed.size, unsubscribed: items.length - subscribed.size },
    wrongEvents,
    writer: table.partition(keys.listWriterPartition(CLIENT, list)).filter((i) => String(i.sk).startsWith('J#') || String(i.sk).startsWith('E#') || i.owner !== undefined).length,
  };
}

/** A transaction asked a moment ago to commit beside bulk writers of the list (its flight item's `wantAt`): the next hold lets them from its start. */
function knockedJustNow(table: ReturnType<typeof memoryTable>) {
  const key = keys.listWriterFlight(CLIENT, LIST);
  table.items.set(`${key.pk}\u0000${key.sk}`, { ...key, wantAt: Date.now() });
}

/** A promise and its resolve (Promise.withResolvers is Node 22's). */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** An address's tag in the flight item, as list-writer.ts flightTag makes it. */
const flightTag = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 5);

/**
 * Two addresses with the same flight tag, `m<i>@x.co` and `n<j>@x.co` (found by search: 30-bit tags), and lines
 * around them, in sorted order: 199 × a… then the first (the two close the first chunk of 200), `between` × mz…,
 * then the second and `after` × z….
 */
function aroundSharedTag(between: number, after: number) {
  const firsts = new Map<string, string>();
  for (let i = 0; i < 2 ** 16; i++) firsts.set(flightTag(`m${i}@x.co`), `m${i}@x.co`);
  for (let j = 0; ; j++) {
    const first = firsts.get(flightTag(`n${j}@x.co`));
    if (!first) continue;
    const second = `n${j}@x.co`;
    const lines = [...linesOf(199, 'a'), { line: 0, email: first }, ...linesOf(between, 'mz'), { line: 0, email: second }, ...linesOf(after, 'z')].map((l, i) => ({ ...l, line: i + 1 }));
    return { first, second, tag: flightTag(first), lines };
  }
}

/** The list's flight item as the table holds it. */
const flight = (table: ReturnType<typeof memoryTable>) => table.items.get(`${keys.listWriterPartition(CLIENT, LIST)}\u0000${keys.listWriterFlight(CLIENT, LIST).sk}`);
/** The flight item's claims: the tags of the addresses being written, one after another ('' when none). */
const claimsOf = (table: ReturnType<typeof memoryTable>) => (flight(table)?.claims as string | undefined) ?? '';
/** The claims an update of the holder's flight state writes (whole), or undefined for another command (taking the item included). */
const claimsWritten = (command: unknown) =>
  command instanceof UpdateCommand && String(command.input.ConditionExpression).startsWith('#h = :o') && command.input.ExpressionAttributeNames?.['#c'] === 'claims'
    ? String(command.input.ExpressionAttributeValues?.[':c'] ?? '')
    : undefined;

/** Stalls the bulk chunk whose journal entry is put second, right after that put, until `resume`; `reached` gives its first address. */
function stallSecondChunk(table: ReturnType<typeof memoryTable>) {
  let resume!: () => void;
  const resumed = new Promise<void>((done) => (resume = done));
  let reach!: (email: string) => void;
  const reached = new Promise<string>((done) => (reach = done));
  let entries = 0;
  table.pauseAfter((command) => {
    if (!(command instanceof PutCommand) || !String(command.input.Item?.sk).startsWith('J#') || ++entries !== 2) return undefined;
    reach(gunzipSync(command.input.Item!.lines as Uint8Array).toString().split('\n')[0].split('\t')[0]);
    return resumed;
  });
  return { reached, resume };
}

/** Count = recount, one event per change, and nothing left in the writer partition (journal, outbox, lease). */
function expectExact(audited: ReturnType<typeof audit>): void {
  expect(audited.counted).toEqual(audited.recount);
  expect(audited.wrongEvents).toEqual([]);
  expect(audited.writer).toBe(0);
}

/**
 * A transaction unsubscribing `email`, which the stalled chunk is writing, waits for that chunk, then applies on top
 * of it; once the bulk write ends, the list is exact with `counted`.
 */
async function unsubscribeWaitsForStalledChunk(
  table: ReturnType<typeof memoryTable>,
  events: ReturnType<typeof recorder>,
  stall: { resume: () => void },
  bulk: Promise<unknown>,
  email: string,
  counted: { subscribed: number; unsubscribed: number },
  /** Awaited once the transaction was sent. */
  meanwhile?: () => Promise<void>,
): Promise<void> {
  let done = false;
  const small = applyLines(CLIENT, LIST, [{ line: 1, email, subscribed: false }], { record: events.record, deadline: Date.now() + 10_000 }).finally(() => (done = true));
  await meanwhile?.();
  await new Promise((wait) => setTimeout(wait, 100));
  expect(done).toBe(false);
  stall.resume();
  await expect(small).resolves.toMatchObject({ nb_unsubscribed: 1 });
  await bulk;
  const after = audit(table, events);
  expect(after.counted).toEqual(counted);
  expectExact(after);
}

/**
 * Kills the writer before its fold (its transactions and batch writes fail from now on), lets its stalled chunk
 * go, then runs the sweeper past the lease: the list as audited then.
 */
async function killBeforeFoldAndSweep(table: ReturnType<typeof memoryTable>, events: ReturnType<typeof recorder>, stall: ReturnType<typeof stallSecondChunk>, bulk: Promise<unknown>) {
  table.failAt((name) => {
    if (name === 'TransactWriteCommand' || name === 'BatchWriteCommand') throw Object.assign(new Error('killed'), { name: 'Killed' });
  });
  stall.resume();
  await expect(bulk).rejects.toThrow();
  table.failAt(undefined);
  await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
  return audit(table, events);
}

/** A bulk write of 300 lines killed at its 4th BatchWriteItem (every call fails from then on), its lease left behind. */
async function killBulkWriter(table: ReturnType<typeof memoryTable>, events: ReturnType<typeof recorder>): Promise<void> {
  let batches = 0;
  let dead = false;
  table.failAt((name) => {
    if (name === 'BatchWriteCommand' && ++batches > 3) dead = true;
    if (dead) throw Object.assign(new Error('killed'), { name: 'Killed' });
  });
  await expect(applyLinesInBulk(CLIENT, LIST, linesOf(300), events.record, CHUNK)).rejects.toThrow();
  table.failAt(undefined);
}

describe('the list writer against an in-memory table', () => {
  it('a bulk re-send reads only the state of each address (range read and key reads) and keeps every attribute of it', async () => {
    const table = memoryTable();
    const events = recorder();
    // Every attribute of a subscriber's state set, as a long life in the list leaves it.
    const stateOf = (email: string): SubscriberState => ({
      email,
      guid: `g-${email}`,
      subscribed: false,
      subscribedAt: '2026-01-01T00:00:00.000Z',
      unsubscribedAt: '2026-02-01T00:00:00.000Z',
      unsubscribedCause: 'PUBLISHER',
      data: { first_name: 'A', city: 'B' },
      openTrackingConsent: true,
      createdAt: '2025-12-01T00:00:00.000Z',
      updatedAt: '2026-02-01T00:00:00.000Z',
      version: 3,
      lastOpId: 'op-1',
      lastOutcome: { created: false, subscribed: false, unsubscribed: true, dataChanged: false },
      lastImportFile: 'file-7',
      consent: [
        { at: '2026-01-01T00:00:00.000Z', subscribed: true, source: 'import', file_id: 'file-7' },
        { at: '2026-02-01T00:00:00.000Z', subscribed: false, cause: 'PUBLISHER', source: 'api' },
      ],
      previousGuids: ['g-before'],
    });
    // 300 addresses in chunks of 200 (one range read per chunk), 600 in one chunk (a range read of 501 that
    // overflows, the rest read by key), then 1 (a key read): each line changes one data field only.
    for (const [n, chunkLines] of [
      [300, 200],
      [600, 600],
      [1, 200],
    ]) {
      const lines = linesOf(n, `k${n}-`);
      // Written through the writer first (the list is not empty, the process's address filter knows them), then
      // given a full state.
      await applyLinesInBulk(CLIENT, LIST, lines, events.record, chunkLines);
      for (const { email } of lines) await ddb.send(new PutCommand({ TableName: tableName(), Item: toItem(CLIENT, LIST, stateOf(email)) }));
      const report = await applyLinesInBulk(CLIENT, LIST, lines.map((l) => ({ ...l, data: { city: 'C' } })), events.record, chunkLines);
      expect(report).toMatchObject({ nb_data_changed: n, nb_created: 0, nb_subscribed: 0, nb_unsubscribed: 0 });
      for (const { email } of lines) {
        const { writeId, ...item } = table.items.get(`${keys.subscriber(CLIENT, LIST, email).pk}\u0000${keys.subscriber(CLIENT, LIST, email).sk}`)!;
        expect(writeId).toBeUndefined(); // no counter moved, no event: no journal entry
        const before = stateOf(email);
        expect(item).toEqual({ ...toItem(CLIENT, LIST, { ...before, data: { first_name: 'A', city: 'C' }, version: 4, lastOpId: undefined, lastOutcome: undefined }), updatedAt: item.updatedAt });
        expect(item.updatedAt).not.toBe(before.updatedAt);
      }
    }
    expect(table.calls).toContain('QueryCommand');
    expect(table.calls).toContain('BatchGetCommand');
  });

  it('a re-sent list in chunks of 500 reads each chunk with one range read, though DynamoDB answers a LastEvaluatedKey when a Query stops at its Limit', async () => {
    const table = memoryTable();
    const events = recorder();
    const list = 31;
    const lines = linesOf(1000, 'r');
    await applyLinesInBulk(CLIENT, list, lines, events.record, 500);
    const before = table.calls.length;
    const report = await applyLinesInBulk(CLIENT, list, lines.map((l) => ({ ...l, data: { city: 'C' } })), events.record, 500);
    expect(report).toMatchObject({ nb_data_changed: 1000, nb_created: 0 });
    const reads = table.calls.slice(before).filter((c) => c === 'QueryCommand' || c === 'BatchGetCommand');
    // Each chunk's range holds exactly its 500 items: one Query each (the writer partition's read at the lease is a Query too).
    expect(reads.filter((c) => c === 'BatchGetCommand')).toEqual([]);
    expect(reads.filter((c) => c === 'QueryCommand').length).toBeGreaterThanOrEqual(2);
  });

  it('a bulk write journals each chunk and folds the journal at release: count = items, one event per line, nothing left behind', async () => {
    const table = memoryTable();
    const events = recorder();
    const report = await applyLinesInBulk(CLIENT, LIST, linesOf(450), events.record, CHUNK);
    expect(report).toMatchObject({ nb_created: 450, nb_subscribed: 450 });
    const after = state(table);
    expect(after).toMatchObject({ counted: 450, journal: 0, outbox: 0, owner: false });
    expect(after.subscribed).toHaveLength(450);
    expect(events.subscribed()).toEqual(after.subscribed);
    // One journal entry per chunk of 200 (3), each with the chunk's events, stored under the chunk's own name.
    expect(events.stored.size).toBe(3);
    expect(table.calls.filter((c) => c === 'PutCommand').length).toBeGreaterThanOrEqual(3);
  });

  it('a bulk write across midnight folds each chunk into the day shard of its own day (one release transaction, two days)', async () => {
    const table = memoryTable();
    const events = recorder();
    const realClock = changeClock.now;
    let chunks = 0;
    // The first two chunks (of 200) before midnight UTC, the other three after.
    changeClock.now = () => Date.parse(++chunks <= 2 ? '2026-11-25T23:59:59.000Z' : '2026-11-26T00:00:01.000Z');
    try {
      await applyLinesInBulk(CLIENT, LIST, linesOf(1000), events.record, CHUNK);
    } finally {
      changeClock.now = realClock;
    }
    expect(state(table)).toMatchObject({ counted: 1000, journal: 0, owner: false });
    const days: Record<string, { subscribed: number; net: number }> = {};
    for (const shard of table.partition(keys.listDaysPartition(CLIENT, LIST))) {
      const day = (days[String(shard.day)] ??= { subscribed: 0, net: 0 });
      day.subscribed += Number(shard.subscribed ?? 0);
      day.net += Number(shard.net ?? 0);
    }
    expect(days).toEqual({ '2026-11-25': { subscribed: 400, net: 400 }, '2026-11-26': { subscribed: 600, net: 600 } });
  });

  it.each([3, 6, 9, 14])('a writer killed at call %i of a bulk write: the sweeper settles exactly the stamped lines after the lease, and a second sweep changes nothing', async (killAt) => {
    const table = memoryTable();
    const events = recorder();
    table.failAt((_name, call) => {
      if (call >= killAt) throw Object.assign(new Error('killed'), { name: 'Killed' });
    });
    await expect(applyLinesInBulk(CLIENT, LIST, linesOf(450), events.record, CHUNK)).rejects.toThrow();
    table.failAt(undefined);
    await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
    const settled = state(table);
    expect(settled).toMatchObject({ journal: 0, owner: false });
    expect(settled.counted).toBe(settled.subscribed.length);
    expect(events.subscribed()).toEqual(settled.subscribed);
    await later(leaseMs() + 2_000, () => sweepListWriters(events.record, Date.now()));
    expect(state(table)).toEqual(settled);
    expect(events.subscribed()).toEqual(settled.subscribed);
  });

  it('a transaction whose events cannot be stored keeps them in its outbox entry; the sweeper stores them', async () => {
    const table = memoryTable();
    const events = recorder();
    events.fail(true);
    await expect(applyLines(CLIENT, LIST, linesOf(3), { record: events.record })).rejects.toBeInstanceOf(EventsNotStoredError);
    expect(state(table)).toMatchObject({ counted: 3, outbox: 1 });
    events.fail(false);
    // A live writer's entry (younger than 10 s) is left to it.
    await sweepListWriters(events.record, Date.now());
    expect(state(table).outbox).toBe(1);
    await sweepListWriters(events.record, Date.now() + 11_000);
    expect(state(table)).toMatchObject({ counted: 3, outbox: 0 });
    expect(events.subscribed()).toEqual(state(table).subscribed);
  });

  it('a transactional write that finds a dead writer’s expired lease takes it over, settles its journal, then applies', async () => {
    const table = memoryTable();
    const events = recorder();
    await killBulkWriter(table, events);
    expect(state(table).owner).toBe(true);
    await later(leaseMs() + 1_000, () => applyLines(CLIENT, LIST, [{ line: 1, email: 'late@x.co' }], { record: events.record, deadline: Date.now() + 5_000 }));
    const after = state(table);
    expect(after).toMatchObject({ journal: 0, owner: false });
    expect(after.subscribed).toContain('late@x.co');
    expect(after.counted).toBe(after.subscribed.length);
    expect(events.subscribed()).toEqual(after.subscribed);
  });

  it('concurrent bulk writes of one process (an import’s chunks) give the list up within about a chunk when a transactional write waits', async () => {
    // Regression (issue 31, small writes during an import): the bulk writes that found the hold stopping joined it
    // again and left at once, in a loop of microtasks that kept the hold from being released and starved the I/O of
    // the chunks in flight until HOLD_MS ran out: small writes waited about HOLD_MS, then more.
    const table = memoryTable();
    const events = recorder();
    table.latency(10);
    // As the import worker calls it: 8 calls in flight, each a chunk of the file (400 lines, two bulk chunks).
    const bulk = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let c = 0; c < 6; c++) await applyLinesInBulk(CLIENT, LIST, linesOf(400, `w${w}c${c}-`), events.record, CHUNK);
      }),
    );
    await new Promise((done) => setTimeout(done, 150));
    expect(state(table).owner).toBe(true);
    const started = Date.now();
    await applyLines(CLIENT, LIST, [{ line: 1, email: 'small@x.co' }], { record: events.record, deadline: Date.now() + 20_000 });
    const waited = Date.now() - started;
    await bulk;
    expect(waited).toBeLessThan(HOLD_MS / 3);
    const after = state(table);
    expect(after).toMatchObject({ counted: 19_201, journal: 0, outbox: 0, owner: false });
    expect(events.subscribed()).toEqual(after.subscribed);
  });

  it('a transactional write of an address a live writer’s chunk is writing reads the lease and the flight item, not its transaction, until the chunk is done', async () => {
    // Regression (issue 31): waiters that retried their whole transaction every 25–75 ms slowed DynamoDB Local's
    // writes of the holder's chunks several-fold, so the holder kept the list longer and the waiters waited longer.
    const table = memoryTable();
    const events = recorder();
    await killBulkWriter(table, events);
    expect(state(table).owner).toBe(true); // a lease that has not expired: its holder may be alive
    const before = table.calls.length;
    // a0000 is in the chunk the writer was killed in: its claim stands until the lease expires.
    await expect(applyLines(CLIENT, LIST, [{ line: 1, email: 'a0000@x.co', subscribed: false }], { record: events.record, deadline: Date.now() + 1_000 })).rejects.toBeInstanceOf(ListBusyError);
    const during = table.calls.slice(before);
    expect(during.filter((c) => c === 'TransactWriteCommand').length).toBeLessThanOrEqual(2);
    expect(during.filter((c) => c === 'GetCommand').length).toBeGreaterThanOrEqual(5);
  });
  it('a write without the event store (a deletion, the form’s update) takes a dead writer’s expired lease over at once: its journal is settled into an outbox entry the sweeper stores', async () => {
    const table = memoryTable();
    const events = recorder();
    await killBulkWriter(table, events);
    const landed = state(table).subscribed;
    expect(landed.length).toBeGreaterThan(0);
    expect(state(table)).toMatchObject({ owner: true, counted: 0 });
    // The form's update of a subscriber the dead writer wrote: no event store, and it does not wait for the sweeper.
    const started = Date.now();
    await later(leaseMs() + 1_000, () => applyLines(CLIENT, LIST, [{ line: 1, email: landed[0], data: { data_plan: 'paid' } }], { deadline: Date.now() + 5_000 }));
    expect(Date.now() - started).toBeLessThan(1_000);
    const after = state(table);
    expect(after).toMatchObject({ journal: 0, owner: false, outbox: 1 });
    expect(after.counted).toBe(after.subscribed.length);
    await sweepListWriters(events.record, Date.now());
    expect(state(table)).toMatchObject({ outbox: 0, counted: landed.length });
    expect(events.subscribed()).toEqual(landed);
  });

  it('a bulk writer paused past its lease between its journal entry and its BatchWriteItem writes nothing once another writer took over: count = recount after the other writer and the sweeper', async () => {
    const table = memoryTable();
    const events = recorder();
    // The first journal entry takes effect, then its writer stalls (a GC pause, a slow network) until `resume`.
    let resume!: () => void;
    const resumed = new Promise<void>((done) => (resume = done));
    let reached!: () => void;
    const inGap = new Promise<void>((done) => (reached = done));
    let paused = false;
    table.pauseAfter((command) => {
      if (paused || !(command instanceof PutCommand) || !String(command.input.Item?.sk).startsWith('J#')) return undefined;
      paused = true;
      reached();
      return resumed;
    });
    const first = applyLinesInBulk(CLIENT, LIST, linesOf(450), events.record, CHUNK);
    first.catch(() => undefined);
    await inGap;
    // Meanwhile its lease expires; another writer takes it over (settling the entry: none of its lines landed) and
    // writes one of the paused chunk's addresses.
    const realNow = Date.now;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + leaseMs() + 1_000);
    try {
      await applyLines(CLIENT, LIST, [{ line: 1, email: 'a0000@x.co', subscribed: false }], { record: events.record, deadline: Date.now() + 5_000 });
      expect(state(table)).toMatchObject({ owner: false, journal: 0 });
      resume();
      await expect(first).rejects.toThrow();
    } finally {
      clock.mockRestore();
    }
    await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
    const after = state(table);
    expect(after).toMatchObject({ journal: 0, owner: false });
    expect(after.counted).toBe(after.subscribed.length);
    expect(events.subscribed()).toEqual(after.subscribed);
    // The other writer's word on a0000 stands: the paused chunk did not overwrite it.
    expect(table.items.get(`${keys.subscribersPartition(CLIENT, LIST)}\u0000${keys.subscriber(CLIENT, LIST, 'a0000@x.co').sk}`)).toMatchObject({ subscribed: false });
  });

  it('a transactional write commits beside a live bulk writer unless a chunk in flight writes its address; that one waits for the chunk only, then applies on top of it', async () => {
    const table = memoryTable();
    const events = recorder();
    // A chunk stalls right after its journal entry, its addresses claimed, until `resume`.
    const stall = stallSecondChunk(table);
    knockedJustNow(table);
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(450), events.record, CHUNK);
    const stalled = await stall.reached;
    // Beside the hold: an address outside the stalled chunk commits at once (the lease stays held).
    const calls = table.calls.length;
    await applyLines(CLIENT, LIST, [{ line: 1, email: 'beside@x.co' }], { record: events.record, deadline: Date.now() + 5_000 });
    expect(table.calls.slice(calls).filter((c) => c === 'TransactWriteCommand').length).toBeLessThanOrEqual(2);
    expect(state(table).owner).toBe(true);
    // An address the stalled chunk is writing waits for it, then unsubscribes what the chunk subscribed.
    await unsubscribeWaitsForStalledChunk(table, events, stall, bulk, stalled, { subscribed: 450, unsubscribed: 1 });
  });

  it('bulk writes and transactional writes of the same addresses at random moments: count = recount and one event per change, whatever the interleaving', async () => {
    let list = 100;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ delay: fc.integer({ min: 0, max: 60 }), index: fc.integer({ min: 0, max: 449 }), subscribed: fc.boolean() }), { minLength: 10, maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        async (writes, latency, askedBefore) => {
          const table = memoryTable();
          table.latency(latency);
          const events = recorder();
          const id = ++list;
          // Asked a moment before (the hold lets transactions beside it from its start), or asked during the bulk writes.
          if (askedBefore) {
            const key = keys.listWriterFlight(CLIENT, id);
            table.items.set(`${key.pk}\u0000${key.sk}`, { ...key, wantAt: Date.now() });
          }
          const bulk = Promise.all([
            applyLinesInBulk(CLIENT, id, linesOf(450), events.record, CHUNK),
            applyLinesInBulk(CLIENT, id, linesOf(450).map((l) => ({ ...l, data: { data_plan: 'paid' } })), events.record, CHUNK),
          ]);
          await Promise.all(
            writes.map(async ({ delay, index, subscribed }) => {
              await new Promise((wait) => setTimeout(wait, delay));
              await applyLines(CLIENT, id, [{ line: 1, email: linesOf(450)[index].email, subscribed }], { record: events.record, deadline: Date.now() + 20_000 });
            }),
          );
          await bulk;
          const after = audit(table, events, id);
          expectExact(after);
        },
      ),
      { numRuns: 16, seed: 31 },
    );
  });

  it.each([5, 11, 17, 23, 29, 41])('a process killed at call %i of a bulk write with transactional writes beside it: after the sweeper, count = recount and one event per change', async (killAt) => {
    const table = memoryTable();
    table.latency(1);
    const events = recorder();
    let calls = 0;
    table.failAt(() => {
      if (++calls >= killAt) throw Object.assign(new Error('killed'), { name: 'Killed' });
    });
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(450), events.record, CHUNK);
    const small = Array.from({ length: 12 }, async (_, i) => {
      await new Promise((wait) => setTimeout(wait, i * 3));
      await applyLines(CLIENT, LIST, [{ line: 1, email: `a${String((i * 37) % 450).padStart(4, '0')}@x.co`, subscribed: i % 2 === 0 }], { record: events.record, deadline: Date.now() + 2_000 });
    });
    await Promise.allSettled([bulk, ...small]);
    table.failAt(undefined);
    await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
    const after = audit(table, events);
    expectExact(after);
  });

  it('a writer killed before its fold, after a transactional write changed an address of a chunk that had landed: the sweeper counts that chunk’s lines all the same (the flight item lists its entry as landed)', async () => {
    // Without the landed mark, the settle would count only the lines whose item still carries the chunk's stamp: the
    // unsubscribe rewrote a0010's item, so its subscription would be lost from the count while its unsubscribe
    // was counted.
    const table = memoryTable();
    const events = recorder();
    // The second chunk stalls after its journal entry: the first (a0000–a0199) lands and takes its claims back.
    const stall = stallSecondChunk(table);
    knockedJustNow(table);
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(300), events.record, CHUNK);
    bulk.catch(() => undefined);
    await stall.reached;
    await vi.waitFor(() => expect((flight(table)?.landed as Set<string> | undefined)?.size).toBe(1));
    await applyLines(CLIENT, LIST, [{ line: 1, email: 'a0010@x.co', subscribed: false }], { record: events.record, deadline: Date.now() + 5_000 });
    const after = await killBeforeFoldAndSweep(table, events, stall, bulk);
    expect(after.counted).toEqual(after.recount);
    expect(after.counted.unsubscribed).toBe(1);
    expect(after.wrongEvents).toEqual([]);
    expect(after.writer).toBe(0);
  });

  it('two chunks in flight whose addresses share a flight tag: the first one’s claims back leave the tag while the second writes its address; a transaction of that address waits for it', async () => {
    // Regression (2026-11-27): a chunk's claims back deleted its tags from the flight item whatever the other chunks
    // in flight claimed. Tags are 5 characters (30 bits): with 8 chunks of 500 in flight two share one about once per
    // 600 chunks. The second chunk's address was then free while it was written: a transaction committed on it, and
    // the chunk's BatchWriteItem (from its earlier read) overwrote it. Count ≠ recount.
    // The second address opens the second chunk.
    const { second: inSecond, lines } = aroundSharedTag(0, 99);
    const table = memoryTable();
    const events = recorder();
    const stall = stallSecondChunk(table);
    knockedJustNow(table);
    const bulk = applyLinesInBulk(CLIENT, LIST, lines, events.record, CHUNK);
    expect(await stall.reached).toBe(inSecond);
    // The first chunk landed and took its claims back; the second, stalled, still writes `inSecond`.
    await vi.waitFor(() => expect((flight(table)?.landed as Set<string> | undefined)?.size).toBe(1));
    expect(claimsOf(table)).toContain(flightTag(inSecond));
    await unsubscribeWaitsForStalledChunk(table, events, stall, bulk, inSecond, { subscribed: 299, unsubscribed: 1 });
  });

  it('a chunk claiming a tag whose taking back for another chunk is still on its way waits for that update: the tag stays claimed while the chunk writes', async () => {
    // Regression (2026-11-27): had the claim gone out at once, a delayed update taking the tag back for an earlier
    // chunk could land after it and free the address the later chunk is writing. Since 2026-11-28 the holder writes
    // the whole claims string, one update at a time: the ninth chunk's claim goes in the update after the delayed one.
    // Chunks 2-8 are mz…; the second address opens the ninth, which starts once a chunk of the first 8 ends.
    const { second: inNinth, tag, lines } = aroundSharedTag(1_400, 199);
    const table = memoryTable();
    table.latency(1);
    const events = recorder();
    knockedJustNow(table);
    // Whether the tag is claimed after each update of the claims: the first taking it back, and each claim of it.
    let claimed = false;
    let takingBack = false;
    const hasTag = (command: unknown, action: 'claim' | 'take back') => {
      const claims = claimsWritten(command);
      if (claims === undefined) return false;
      return action === 'claim' ? !claimed && claims.includes(tag) : claimed && !claims.includes(tag);
    };
    // The first chunk's claims back are delayed on their way for 300 ms, or until a claim of the shared tag took effect.
    let overtake!: () => void;
    const overtaken = new Promise<void>((done) => (overtake = done));
    let delayed!: Promise<void>;
    table.pauseBefore((command) => {
      if (takingBack || !hasTag(command, 'take back')) return undefined;
      takingBack = true;
      delayed = Promise.race([overtaken, new Promise<void>((done) => setTimeout(done, 300))]);
      return delayed;
    });
    // The ninth chunk stalls after its journal entry (claimed, read, not written) until `resume`.
    let claimsOfTag = 0;
    let resume!: () => void;
    const resumed = new Promise<void>((done) => (resume = done));
    let reach!: () => void;
    const reached = new Promise<void>((done) => (reach = done));
    table.pauseAfter((command) => {
      const claims = claimsWritten(command);
      // The first claim is the first chunk's own; the second, the ninth chunk's.
      if (hasTag(command, 'claim') && ++claimsOfTag === 2) overtake();
      if (claims !== undefined) claimed = claims.includes(tag);
      if (!(command instanceof PutCommand) || !String(command.input.Item?.sk).startsWith('J#')) return undefined;
      if (!gunzipSync(command.input.Item!.lines as Uint8Array).toString().startsWith(`${inNinth}\t`)) return undefined;
      reach();
      return resumed;
    });
    const bulk = applyLinesInBulk(CLIENT, LIST, lines, events.record, CHUNK);
    await reached;
    // The first chunk's claims back were on their way when the ninth chunk claimed (else this tests nothing).
    expect(takingBack).toBe(true);
    expect(delayed).toBeDefined();
    await delayed;
    expect(claimsOfTag).toBe(2);
    expect(claimsOf(table)).toContain(tag);
    resume();
    await bulk;
    expectExact(audit(table, events));
  });

  it('a chunk whose claims back failed keeps its claims until an update marks its entry landed: a chunk sharing its flight tag does not take the tag back before', async () => {
    // The failed update did not mark the first chunk's entry landed, so its stamps still count: a transaction on its
    // address must not commit beside the hold (review of the per-tag counts, 2026-11-27). Since 2026-11-28 each update
    // writes the hold's whole state: the one that frees the tag also marks the first entry landed.
    const { second: inSecond, tag, lines } = aroundSharedTag(0, 99);
    const table = memoryTable();
    const events = recorder();
    // An update that marks an entry landed (the claims back of a chunk); the first marks the first chunk's entry.
    const landedBy = (command: unknown) => (command instanceof UpdateCommand ? [...((command.input.ExpressionAttributeValues?.[':l'] as Set<string> | undefined) ?? [])] : []);
    const isClaimsBack = (command: unknown) => landedBy(command).length > 0;
    let firstWriteId: string | undefined;
    // The first claims back are the first chunk's (the second one stalls before its items).
    let failed = false;
    table.pauseBefore((command) => {
      if (!failed && isClaimsBack(command)) {
        failed = true;
        [firstWriteId] = landedBy(command);
        return Promise.reject(Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }));
      }
      return undefined;
    });
    const stall = stallSecondChunk(table);
    let tagAfterSecondClaimsBack: boolean | undefined;
    knockedJustNow(table);
    const bulk = applyLinesInBulk(CLIENT, LIST, lines, events.record, CHUNK);
    expect(await stall.reached).toBe(inSecond);
    await vi.waitFor(() => expect(failed).toBe(true));
    // The second chunk lands and takes its claims back: look at the flight item right after that update. The tag may
    // go only with the first chunk's entry marked landed (its stamps then no longer count).
    let firstLandedThen: boolean | undefined;
    table.pauseAfter((command) => {
      if (isClaimsBack(command) && tagAfterSecondClaimsBack === undefined) {
        tagAfterSecondClaimsBack = claimsOf(table).includes(tag);
        firstLandedThen = ((flight(table)?.landed as Set<string> | undefined) ?? new Set()).has(firstWriteId!);
      }
      return undefined;
    });
    stall.resume();
    await bulk;
    expect(tagAfterSecondClaimsBack === true || firstLandedThen === true).toBe(true);
    expectExact(audit(table, events));
  });

  it('a chunk the opening claimed and a later chunk sharing its flight tag: the first one’s claims back leave the tag while the later one writes', async () => {
    // The opening mid-hold claims the chunks in flight; those claims count per tag as a chunk's own claim does, else
    // the first chunk's claims back would free the tag of a chunk that claimed it after the opening.
    // Chunks 2-59 are mz…; the second address opens the 60th, which starts long after a transaction asked and the
    // hold opened.
    const { first: inFirst, second: inLast, tag, lines } = aroundSharedTag(11_600, 199);
    const table = memoryTable();
    table.latency(3);
    const events = recorder();
    let opened = false;
    let openingClaimedTag = false;
    let lastClaimedAfterOpening: boolean | undefined;
    let firstWriteId = '';
    const stalls = new Map([inFirst, inLast].map((email) => [email, deferred()]));
    const reached = new Map([inFirst, inLast].map((email) => [email, deferred()]));
    table.pauseAfter((command) => {
      // The opening: the first update of the claims that opens the item (`openUntil`).
      if (!opened && claimsWritten(command) !== undefined && command instanceof UpdateCommand && command.input.ExpressionAttributeNames?.['#u'] === 'openUntil') {
        opened = true;
        openingClaimedTag = claimsWritten(command)!.includes(tag);
      }
      if (!(command instanceof PutCommand) || !String(command.input.Item?.sk).startsWith('J#')) return undefined;
      const emails = gunzipSync(command.input.Item!.lines as Uint8Array).toString().split('\n').map((line) => line.split('\t')[0]);
      const stalled = [inFirst, inLast].find((email) => emails.includes(email));
      if (!stalled) return undefined;
      // A chunk journals after its claim: the last one claimed the tag after the opening, and it is claimed now.
      if (stalled === inLast) lastClaimedAfterOpening = opened && claimsOf(table).includes(tag);
      if (stalled === inFirst) firstWriteId = String(command.input.Item!.writeId);
      reached.get(stalled)!.resolve();
      return stalls.get(stalled)!.promise;
    });
    const bulk = applyLinesInBulk(CLIENT, LIST, lines, events.record, CHUNK);
    await reached.get(inFirst)!.promise;
    // A transaction asks to write beside the hold (its address is another chunk's: it waits, it only asks).
    const small = applyLines(CLIENT, LIST, [{ line: 1, email: 'mz0005@x.co', subscribed: false }], { record: events.record, deadline: Date.now() + 20_000 });
    await reached.get(inLast)!.promise;
    expect(openingClaimedTag).toBe(true);
    expect(lastClaimedAfterOpening).toBe(true);
    // The first chunk lands and takes its claims back; the last one, stalled, still writes `inLast`.
    stalls.get(inFirst)!.resolve();
    await vi.waitFor(() => expect([...((flight(table)?.landed as Set<string> | undefined) ?? [])]).toContain(firstWriteId));
    expect(claimsOf(table)).toContain(tag);
    stalls.get(inLast)!.resolve();
    await expect(small).resolves.toMatchObject({ nb_unsubscribed: 1 });
    await bulk;
    expectExact(audit(table, events));
  }, 20_000);

  it('a process killed at random calls of a bulk write whose chunks share a flight tag, with transactions of those two addresses beside it: after the sweeper, count = recount and one event per change', async () => {
    // Nine chunks of 200 (the first and the ninth share a tag; the ninth starts once one of the first 8 ends). The
    // crash check of the per-tag counts; the tests above pin the interleavings that lost a write before them (random
    // ones seldom meet that window: this one passes on the code before them too).
    const { first, second, lines } = aroundSharedTag(1_400, 199);
    let list = 300;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 5, max: 160 }),
        fc.array(fc.record({ delay: fc.integer({ min: 0, max: 40 }), ofFirst: fc.boolean(), subscribed: fc.boolean() }), { minLength: 2, maxLength: 8 }),
        async (killAt, writes) => {
          const id = ++list;
          const table = memoryTable();
          table.latency(1);
          const events = recorder();
          const key = keys.listWriterFlight(CLIENT, id);
          table.items.set(`${key.pk}\u0000${key.sk}`, { ...key, wantAt: Date.now() });
          let calls = 0;
          table.failAt(() => {
            if (++calls >= killAt) throw Object.assign(new Error('killed'), { name: 'Killed' });
          });
          const bulk = applyLinesInBulk(CLIENT, id, lines, events.record, CHUNK);
          const small = writes.map(async ({ delay, ofFirst, subscribed }) => {
            await new Promise((wait) => setTimeout(wait, delay));
            await applyLines(CLIENT, id, [{ line: 1, email: ofFirst ? first : second, subscribed }], { record: events.record, deadline: Date.now() + 2_000 });
          });
          await Promise.allSettled([bulk, ...small]);
          table.failAt(undefined);
          await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
          expectExact(audit(table, events, id));
        },
      ),
      { numRuns: 12, seed: 27 },
    );
  }, 60_000);

  it('the chunks of a hold share 8 BatchWriteItem calls in flight (as the raw baseline), a chunk alone uses 4', async () => {
    const table = memoryTable();
    table.latency(2);
    const events = recorder();
    let inFlight = 0;
    let most = 0;
    table.pauseBefore((command) => {
      if (command instanceof BatchWriteCommand) most = Math.max(most, ++inFlight);
      return undefined;
    });
    table.pauseAfter((command) => {
      if (command instanceof BatchWriteCommand) inFlight--;
      return undefined;
    });
    // 40 chunks of 200 lines (8 calls each), 8 chunks in flight: up to 32 calls without the hold's limit.
    await applyLinesInBulk(CLIENT, LIST, linesOf(8_000), events.record, CHUNK);
    expect(most).toBe(8);
    most = 0;
    await applyLinesInBulk(CLIENT, 2, linesOf(200), events.record, CHUNK);
    expect(most).toBe(4);
    expectExact(audit(table, events));
  }, 20_000);

  it('the hold serves its chunks’ calls oldest chunk first: chunks end one after another, not in waves', async () => {
    // Regression (2026-11-27, thirteenth session): served first come first served, the 8 chunks in flight shared the
    // calls evenly and ended together, then the next 8 claimed and journaled together, with no write in flight
    // meanwhile: a bubble per wave of 8 chunks (a 20,000-line POST with small writes to its list: 7.6 of the 8
    // calls in flight on average, against 7.95 served oldest first).
    const table = memoryTable();
    table.latency(2);
    const events = recorder();
    let calls = 0;
    const callsAtStore: number[] = [];
    table.pauseBefore((command) => {
      if (command instanceof BatchWriteCommand) calls++;
      return undefined;
    });
    const record = (clientId: string, stored: EventRecord[], name: string) => {
      callsAtStore.push(calls);
      return events.record(clientId, stored, name);
    };
    // 16 chunks of 200 lines (8 calls each), 8 in flight.
    await applyLinesInBulk(CLIENT, LIST, linesOf(3_200), record, CHUNK);
    expect(calls).toBe(128);
    // The first chunk's events are stored once its 8 calls and about as many of the others' were made (24 calls, then
    // 29, 32, 45, ...); first come first served, the 8 chunks in flight made most of theirs first (44, 48, ... 72, then
    // 100: two waves).
    expect(callsAtStore[0]).toBeLessThanOrEqual(32);
    expectExact(audit(table, events));
  }, 20_000);

  it('a holder of the kind before 2026-11-28 (claims in a set `f`, open with `until`) lets in no transaction of this kind; a holder of this kind that takes its lease over removes both', async () => {
    // During a deployment both kinds run: a transaction of this kind checks `openUntil` and `claims`, which the old
    // holder does not write, so it must wait for that holder instead of committing beside it unchecked.
    const table = memoryTable();
    const events = recorder();
    const now = Date.now();
    for (let shard = 0; shard < 16; shard++) {
      const key = keys.listWriterShard(CLIENT, LIST, shard);
      table.items.set(`${key.pk}\u0000${key.sk}`, { ...key, owner: 'old-kind', expiresAt: now + leaseMs(), g: 1 });
    }
    const key = keys.listWriterFlight(CLIENT, LIST);
    table.items.set(`${key.pk}\u0000${key.sk}`, { ...key, holder: 'old-kind', gen: 1, until: now + leaseMs(), f: new Set([flightTag('other@x.co')]), b: 0 });
    await expect(applyLines(CLIENT, LIST, [{ line: 1, email: 'new@x.co' }], { record: events.record, deadline: Date.now() + 500 })).rejects.toBeInstanceOf(ListBusyError);
    expect(state(table).subscribed).toEqual([]);
    await later(leaseMs() + 1_000, () => applyLinesInBulk(CLIENT, LIST, linesOf(300), events.record, CHUNK));
    expect(flight(table)).toBeDefined();
    expect(flight(table)?.f).toBeUndefined();
    expect(flight(table)?.until).toBeUndefined();
    expectExact(audit(table, events));
  });

  it('a bulk writer whose flight item meets a transaction conflict right after it took the lease tries that update again, not the lease it holds', async () => {
    // Regression (review of the flight item): the conflict sent acquire back to its lease transaction, which its own
    // unexpired owner refused until the deadline: the list stayed held by nobody alive for the lease's 60 s.
    const table = memoryTable();
    const events = recorder();
    let updates = 0;
    table.failAt((name) => {
      if (name === 'UpdateCommand' && ++updates === 1) throw Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException', $metadata: { httpStatusCode: 400 } });
    });
    await expect(applyLinesInBulk(CLIENT, LIST, linesOf(300), events.record, CHUNK)).resolves.toMatchObject({ nb_subscribed: 300 });
    expect(updates).toBeGreaterThan(1);
    expect(audit(table, events)).toMatchObject({ counted: { subscribed: 300, unsubscribed: 0 }, wrongEvents: [], writer: 0 });
  }, 10_000);

  it('a bulk write nobody asks to write beside claims nothing; a transaction that asks is let in at a later chunk start, with the chunks in flight claimed in the same update', async () => {
    const table = memoryTable();
    const events = recorder();
    await applyLinesInBulk(CLIENT, LIST, linesOf(450, 'quiet-'), events.record, CHUNK);
    // One update of the flight item per hold (taking it), none per chunk.
    expect(table.calls.filter((c) => c === 'UpdateCommand').length).toBe(1);
    table.latency(2);
    const stall = stallSecondChunk(table);
    // 40 chunks, 8 in flight: chunk starts go on while the stalled one holds its addresses, read but not written.
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(8_000), events.record, CHUNK);
    const stalled = await stall.reached;
    expect(flight(table)?.openUntil).toBeUndefined();
    // Let in beside the hold, but not on the stalled chunk's address: it waits for that chunk.
    await unsubscribeWaitsForStalledChunk(table, events, stall, bulk, stalled, { subscribed: 450 + 8_000 - 1, unsubscribed: 1 }, () =>
      vi.waitFor(() => expect(flight(table)?.openUntil).toBeDefined()),
    );
  }, 20_000);

  it('a writer killed before its fold, after a transaction let in mid-hold changed an address of a chunk that had ended before: the sweeper counts that chunk’s lines (the opening marked its entry landed)', async () => {
    const table = memoryTable();
    const events = recorder();
    table.latency(2);
    const stall = stallSecondChunk(table);
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(8_000), events.record, CHUNK);
    bulk.catch(() => undefined);
    await stall.reached;
    // A chunk that ended while nobody had asked (its events are stored): its address, rewritten beside the hold.
    await vi.waitFor(() => expect(events.subscribed().length).toBeGreaterThan(0));
    const ended = events.subscribed()[0];
    await applyLines(CLIENT, LIST, [{ line: 1, email: ended, subscribed: false }], { record: events.record, deadline: Date.now() + 10_000 });
    const after = await killBeforeFoldAndSweep(table, events, stall, bulk);
    expect(after.counted).toEqual(after.recount);
    expect(after.counted.unsubscribed).toBe(1);
    expect(after.wrongEvents).toEqual([]);
    expect(after.writer).toBe(0);
  }, 20_000);

  it('a hold poisoned by a chunk whose events could not be stored never lets transactions beside it, though one asks: that chunk’s items keep their stamps for the settle', async () => {
    // Regression (review of the opening on request): the opening claimed only the chunks in flight, and the poisoned
    // chunk had left them with its entry unsettled and unmarked; a transaction beside the hold could then rewrite
    // its item and the takeover's settle, reading the stamps, would lose that line.
    const table = memoryTable();
    const events = recorder();
    const stall = stallSecondChunk(table);
    events.fail(true);
    const bulk = applyLinesInBulk(CLIENT, LIST, linesOf(300), events.record, CHUNK);
    bulk.catch(() => undefined);
    await stall.reached;
    // The first chunk's items landed, its events were refused four times (the first try and three retries): poisoned.
    await vi.waitFor(() => expect(events.refused()).toBeGreaterThanOrEqual(4), { timeout: 5_000 });
    await new Promise((wait) => setTimeout(wait, 20));
    await expect(applyLines(CLIENT, LIST, [{ line: 1, email: 'a0010@x.co', subscribed: false }], { record: events.record, deadline: Date.now() + 1_000 })).rejects.toBeInstanceOf(ListBusyError);
    expect(flight(table)?.wantAt).toBeDefined();
    expect(flight(table)?.openUntil).toBeUndefined();
    events.fail(false);
    stall.resume();
    await expect(bulk).rejects.toThrow();
    await later(leaseMs() + 1_000, () => sweepListWriters(events.record, Date.now()));
    const after = audit(table, events);
    expectExact(after);
    expect(after.counted).toEqual({ subscribed: 300, unsubscribed: 0 });
  });
});
