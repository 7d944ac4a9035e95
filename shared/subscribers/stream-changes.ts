/**
 * What one stream record of a subscriber item changes (pure): the list's counter deltas, the day's statistics and
 * its events, each with the record's id as its hidden id, so a repeated record is one event downstream.
 */
import { EVENT_ID_FIELD, type EventRecord } from '../events/types.js';
import { dailyOfDeletions, dailyOfLine, dayOf, type DailyDeltas } from './daily.js';
import { countState, deletionEvent, transitionEvents, zeroDeltas, type CounterDeltas } from './rules.js';
import type { SubscriberItem } from './store.js';

/**
 * A stream record of a subscriber item: its id, its images, and two times (epoch ms): `at`, the record's own (to the
 * second in AWS, to the minute in DynamoDB Local), and `seen`, when the consumer read it.
 */
export interface ItemChange {
  id: string;
  at: number;
  seen: number;
  old?: SubscriberItem;
  next?: SubscriberItem;
}

/**
 * When a deletion happened: when the consumer saw it, but never before the record's time nor more than a minute
 * after it (a consumer far behind dates it near the record; DynamoDB Local rounds the record's time down to the minute).
 */
export const deletionTime = ({ at, seen }: Pick<ItemChange, 'at' | 'seen'>) => Math.min(Math.max(seen, at), at + 60_000);

/** What an item change does to its list. */
export interface ListChange {
  clientId: string;
  listId: number;
  deltas: CounterDeltas;
  /** The UTC day the change counts on: of the new state's `updatedAt`, or of the deletion (deletionTime). */
  day: string;
  daily: DailyDeltas;
  events: EventRecord[];
}

/** The list change of one item change (undefined for a record with no image). */
export function listChangeOf({ id, at, seen, old, next }: ItemChange): ListChange | undefined {
  const item = next ?? old;
  if (!item) return undefined;
  const { clientId, listId } = item;
  const deltas = zeroDeltas();
  countState(deltas, old, -1);
  countState(deltas, next, 1);
  const withId = (events: EventRecord[]) => events.map((event) => ({ ...event, [EVENT_ID_FIELD]: id }));
  if (!next) {
    const date = new Date(deletionTime({ at, seen })).toISOString();
    return { clientId, listId, deltas, day: dayOf(date), daily: dailyOfDeletions([item]), events: withId([deletionEvent(item, listId, date)]) };
  }
  const outcome = { created: !old, subscribed: next.subscribed && !old?.subscribed, unsubscribed: !next.subscribed && (!old || old.subscribed) };
  return { clientId, listId, deltas, day: dayOf(next.updatedAt), daily: dailyOfLine(deltas), events: withId(transitionEvents(outcome, next, listId)) };
}
