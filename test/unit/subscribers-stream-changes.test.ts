import { describe, expect, it } from 'vitest';
import { defaultGuid, type SubscriberState } from '../../shared/subscribers/rules.js';
import type { SubscriberItem } from '../../shared/subscribers/store.js';
import { deletionTime, listChangeOf } from '../../shared/subscribers/stream-changes.js';

const at = Date.parse('2026-11-29T10:00:00.000Z');
const item = (over: Partial<SubscriberState> = {}): SubscriberItem => ({
  pk: 'SUBS#c#1',
  sk: 'SUB#a@x.co',
  clientId: 'c',
  listId: 1,
  email: 'a@x.co',
  guid: defaultGuid('a@x.co'),
  subscribed: true,
  data: {},
  createdAt: '2026-11-28T09:00:00.000Z',
  updatedAt: '2026-11-28T09:00:00.000Z',
  version: 1,
  ...over,
});
const zero = { subscribed: 0, unsubscribed: 0, HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 };
const noDay = { subscribed: 0, unsubscribed: 0, READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0, deleted: 0, net: 0 };

describe('listChangeOf (what one stream record of a subscriber changes)', () => {
  it('a new subscribed address: +1 subscribed, a subscription on the day of its updatedAt, one nl_subscribe with the record id', () => {
    const change = listChangeOf({ id: 'r1', at, seen: at, next: item() });
    expect(change).toMatchObject({ clientId: 'c', listId: 1, day: '2026-11-28', deltas: { ...zero, subscribed: 1 }, daily: { ...noDay, subscribed: 1, net: 1 } });
    expect(change?.events).toEqual([{ event: 'nl_subscribe', date: '2026-11-28T09:00:00.000Z', email: 'a@x.co', email_list_id: 1, guid: defaultGuid('a@x.co'), _id: 'r1' }]);
  });

  it('a new address stored unsubscribed: counted unsubscribed by its cause, no subscription or unsubscription that day, no event', () => {
    const change = listChangeOf({ id: 'r2', at, seen: at, next: item({ subscribed: false, unsubscribedCause: 'PUBLISHER' }) });
    expect(change).toMatchObject({ deltas: { ...zero, unsubscribed: 1, PUBLISHER: 1 }, daily: noDay, events: [] });
  });

  it('a subscribed address unsubscribed: the counters move across, an unsubscription by cause, one nl_unsubscribe', () => {
    const next = item({ subscribed: false, unsubscribedCause: 'HARD_BOUNCE', updatedAt: '2026-11-29T08:00:00.000Z', version: 2 });
    const change = listChangeOf({ id: 'r3', at, seen: at, old: item(), next });
    expect(change).toMatchObject({ day: '2026-11-29', deltas: { subscribed: -1, unsubscribed: 1, HARD_BOUNCE: 1, PUBLISHER: 0, READER: 0 }, daily: { ...noDay, unsubscribed: 1, HARD_BOUNCE: 1, net: -1 } });
    expect(change?.events.map((e) => [e.event, e.cause, e._id])).toEqual([['nl_unsubscribe', 'HARD_BOUNCE', 'r3']]);
  });

  it('a change of data only: nothing counted, no event', () => {
    expect(listChangeOf({ id: 'r4', at, seen: at, old: item(), next: item({ data: { data_x: 1 }, version: 2 }) })).toMatchObject({ deltas: zero, daily: noDay, events: [] });
  });

  it('a deletion (no new image): its contribution removed, a deletion on the day of the record, one nl_delete dated at the record', () => {
    const change = listChangeOf({ id: 'r5', at, seen: at, old: item() });
    expect(change).toMatchObject({ day: '2026-11-29', deltas: { ...zero, subscribed: -1 }, daily: { ...noDay, deleted: 1, net: -1 } });
    expect(change?.events).toEqual([{ event: 'nl_delete', date: '2026-11-29T10:00:00.000Z', email: 'a@x.co', email_list_id: 1, guid: defaultGuid('a@x.co'), _id: 'r5' }]);
  });

  it('a record with no image changes nothing', () => {
    expect(listChangeOf({ id: 'r6', at, seen: at })).toBeUndefined();
  });

  it('dates a deletion when the consumer saw it, within the minute after the record (DynamoDB Local rounds it to the minute)', () => {
    expect(deletionTime({ at, seen: at + 30_000 })).toBe(at + 30_000);
    expect(deletionTime({ at, seen: at + 5 * 60_000 })).toBe(at + 60_000);
    expect(deletionTime({ at, seen: at - 1_000 })).toBe(at);
  });
});
