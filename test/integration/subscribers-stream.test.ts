/**
 * The table stream's consumer (functions/subscribers-stream.ts) applies a batch exactly once: killed at random
 * points of a batch (through its clients) and retried, bisected, or handed the same records again, it counts
 * every record once and stores one event per record (the assembler and the change feed keep one line per id).
 */
import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { context } from '../../infra/local/jobs.js';
import { queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { readCounters, toItem } from '../../shared/subscribers/store.js';
import { defaultGuid, type SubscriberState } from '../../shared/subscribers/rules.js';
import { killAt, seeded } from '../helpers/kill.js';
import { captureOutput } from '../helpers/logs.js';
import { rawEventObjects } from '../helpers/subscribers.js';

afterEach(() => vi.restoreAllMocks());

const { handler } = await import('../../functions/subscribers-stream.js');
const invoke = (records: DynamoDBRecord[]) => handler({ Records: records } satisfies DynamoDBStreamEvent, context('subscribersStream', 120) satisfies Context) as Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;

let sequence = 0;
/** A stream record of a subscriber item of the list, as Lambda hands it (`old` → `next`; no `next`: a deletion). */
function record(clientId: string, listId: number, old: SubscriberState | undefined, next: SubscriberState | undefined): DynamoDBRecord {
  const image = (s: SubscriberState | undefined) => (s ? (marshall(toItem(clientId, listId, s), { removeUndefinedValues: true }) as never) : undefined);
  const item = (next ?? old)!;
  return {
    eventID: randomUUID(),
    eventName: !old ? 'INSERT' : next ? 'MODIFY' : 'REMOVE',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: marshall(keys.subscriber(clientId, listId, item.email)) as never,
      NewImage: image(next),
      OldImage: image(old),
      SequenceNumber: String(++sequence).padStart(21, '0'),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

let second = 0;
/** A state written at a second of its own: each record's applied item is another, so a batch makes several groups. */
const state = (email: string, subscribed: boolean, version: number): SubscriberState => {
  const now = new Date(Date.parse('2026-11-29T00:00:00Z') + ++second * 1000).toISOString();
  return { email, guid: defaultGuid(email), subscribed, unsubscribedCause: subscribed ? undefined : 'READER', data: {}, createdAt: now, updatedAt: now, version };
};

/** 120 records of a fresh list: 60 addresses subscribed, 20 of them unsubscribed again, 10 others deleted. */
function batchOf(clientId: string, listId: number): DynamoDBRecord[] {
  const records: DynamoDBRecord[] = [];
  for (let i = 0; i < 60; i++) records.push(record(clientId, listId, undefined, state(`s${i}@x.co`, true, 1)));
  for (let i = 0; i < 20; i++) records.push(record(clientId, listId, state(`s${i}@x.co`, true, 1), state(`s${i}@x.co`, false, 2)));
  for (let i = 50; i < 60; i++) records.push(record(clientId, listId, state(`s${i}@x.co`, true, 1), undefined));
  for (let i = 0; i < 30; i++) records.push(record(clientId, listId, undefined, state(`n${i}@x.co`, i % 3 !== 0, 1)));
  return records;
}

/** What the batch must leave, however it was delivered. */
async function expectAppliedOnce(clientId: string, listId: number) {
  const counters = await readCounters(clientId, listId);
  expect(counters).toEqual({ subscribed: 30 + 20, unsubscribed: 20 + 10, HARD_BOUNCE: 0, PUBLISHER: 0, READER: 30 });
  const days = await queryAll<Record<string, number>>({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.listDaysPartition(clientId, listId) }, ConsistentRead: true });
  const sum = (name: string) => days.reduce((n, d) => n + Number(d[name] ?? 0), 0);
  expect({ subscribed: sum('subscribed'), unsubscribed: sum('unsubscribed'), deleted: sum('deleted'), net: sum('net') }).toEqual({ subscribed: 80, unsubscribed: 20, deleted: 10, net: 50 });
  // One line per record id (what the assembler keeps), the same ids however often they were written.
  const ids = async (event: string) => new Set((await rawEventObjects(clientId, event)).flat().map((e) => String(e._id))).size;
  expect([await ids('nl_subscribe'), await ids('nl_unsubscribe'), await ids('nl_delete')]).toEqual([80, 20, 10]);
}

describe('the stream consumer applies a batch exactly once', () => {
  it('handed the same batch twice (a replay), counts it once', async () => {
    const clientId = `t-${randomUUID().slice(0, 12)}`;
    const records = batchOf(clientId, 1);
    expect((await invoke(records)).batchItemFailures).toEqual([]);
    expect((await invoke(records)).batchItemFailures).toEqual([]);
    await expectAppliedOnce(clientId, 1);
    // And once more, bisected.
    await invoke(records.slice(0, 61));
    await invoke(records.slice(61));
    await expectAppliedOnce(clientId, 1);
  });

  it('killed at random calls of a batch, then retried whole, bisected or from the first failed record, counts every record once', async () => {
    const random = seeded(20261129);
    const output = captureOutput();
    let partial = 0;
    // The calls of one whole delivery, so the kill points cover all of them.
    const meter = killAt(() => 'pass');
    await invoke(batchOf(`t-${randomUUID().slice(0, 12)}`, 1));
    meter.restore();
    const calls = meter.calls;
    try {
      for (let round = 0; round < 6; round++) {
        const clientId = `t-${randomUUID().slice(0, 12)}`;
        const records = batchOf(clientId, 1);
        const point = 1 + Math.floor(random() * calls);
        const kill = killAt((_command, call) => (call >= point ? 'kill' : 'pass'));
        const failed = await invoke(records).then((r) => r.batchItemFailures.map((f) => f.itemIdentifier), () => records.map((r) => r.dynamodb!.SequenceNumber!));
        kill.restore();
        const from = records.findIndex((r) => failed.includes(r.dynamodb!.SequenceNumber!));
        if (from > 0) partial++;
        // As Lambda retries: from the first failed record on; after a whole failure, in two halves (bisect).
        const rest = from < 0 ? [] : records.slice(from);
        if (round % 2 === 0 || from > 0) await invoke(rest);
        else {
          await invoke(rest.slice(0, rest.length / 2));
          await invoke(rest.slice(rest.length / 2));
        }
        await invoke(records);
        await expectAppliedOnce(clientId, 1);
      }
    } finally {
      output.restore();
    }
    // Some kills landed between groups: part of the batch was applied before the retry (else this proves little).
    expect(partial).toBeGreaterThan(0);
  });
});
