/**
 * A list's subscriptions, unsubscriptions (by cause) and end-of-day subscriber count per UTC day, from the day
 * shards the list writer writes with its counters (shared/subscribers/daily.ts): one Query of the days from
 * `from` on and one of the counters, whatever the list's size.
 */
import { queryAll, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { getList } from '../lists/lists.js';
import { DAILY_NAMES, zeroDaily, type DailyDeltas } from '../subscribers/daily.js';
import { readCounters } from '../subscribers/store.js';
import { daysBetween, type DateRange } from './range.js';
import type { ListDay } from './schemas.js';

/**
 * The days `from`..`to` of a list of the client, oldest first (UnknownListError for a list the client does not
 * have). Days before the list was created are zeros. `subscribers` of a day is the current count minus the net change of the days after it; the counters
 * and the days are read one after the other, so a write landing between the two reads shows in one only.
 */
export async function listDaily(clientId: string, listId: number, range: DateRange): Promise<ListDay[]> {
  const list = await getList(clientId, listId);
  const created = list.created_at.slice(0, 10);
  const [shards, counters] = await Promise.all([
    queryAll<Record<string, unknown> & { day: string }>({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: { ':pk': keys.listDaysPartition(clientId, listId), ':from': keys.listDayFrom(range.from) },
      ConsistentRead: true,
    }),
    readCounters(clientId, listId),
  ]);
  const byDay = new Map<string, DailyDeltas>();
  for (const shard of shards) {
    const day = byDay.get(shard.day) ?? byDay.set(shard.day, zeroDaily()).get(shard.day)!;
    for (const name of DAILY_NAMES) day[name] += Number(shard[name] ?? 0);
  }
  // The net change after `to`, then walking back day by day.
  let after = 0;
  for (const [day, d] of byDay) if (day > range.to) after += d.net;
  const out: ListDay[] = [];
  for (const date of daysBetween(range.from, range.to).reverse()) {
    const d = byDay.get(date) ?? zeroDaily();
    if (date < created) {
      out.push({ date, subscribed: 0, unsubscribed: 0, causes: { READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0 }, subscribers: 0 });
      continue;
    }
    out.push({
      date,
      subscribed: d.subscribed,
      unsubscribed: d.unsubscribed,
      causes: { READER: d.READER, PUBLISHER: d.PUBLISHER, HARD_BOUNCE: d.HARD_BOUNCE },
      subscribers: counters.subscribed - after,
    });
    after += d.net;
  }
  return out.reverse();
}
