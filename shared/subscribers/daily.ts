/**
 * A list's changes per UTC day (the statistics of GET /v1/stats/lists/{id}/daily): per list, day and shard an
 * item of ADD counters, added by the stream consumer in the transaction that moves the counters
 * (stream-consumer.ts), so the days sum to exactly what the counters moved.
 *
 * - `subscribed`: addresses that became subscribed (new, or resubscribed): the nl_subscribe events.
 * - `unsubscribed`: subscribed addresses that became unsubscribed: the nl_unsubscribe events; by cause in
 *   `READER`, `PUBLISHER`, `HARD_BOUNCE` (the stored unsubscribed_cause). A new address stored unsubscribed
 *   was never subscribed: it counts in neither.
 * - `deleted`: subscriptions deleted by users/delete (subscribed or not).
 * - `net`: what the day moved the list's `subscribed` counter by (subscriptions − unsubscriptions − deleted
 *   subscribed addresses): a day's end count is the current count minus the `net` of the days after it.
 */
import { keys } from '../db/keys.js';
import { tableName } from '../db/client.js';
import type { CounterDeltas, SubscriberState } from './rules.js';

export interface DailyDeltas {
  subscribed: number;
  unsubscribed: number;
  READER: number;
  PUBLISHER: number;
  HARD_BOUNCE: number;
  deleted: number;
  net: number;
}

export const zeroDaily = (): DailyDeltas => ({ subscribed: 0, unsubscribed: 0, READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0, deleted: 0, net: 0 });
export const DAILY_NAMES = Object.keys(zeroDaily()) as Array<keyof DailyDeltas>;

const CAUSES = ['READER', 'PUBLISHER', 'HARD_BOUNCE'] as const;

/**
 * The day's counts of one change, from its counter deltas (the prior state's contribution removed, the new
 * one's added): `subscribed` +1 is a subscription, −1 an unsubscription whose cause is the one counted +1.
 */
export function dailyOfLine(d: CounterDeltas, into: DailyDeltas = zeroDaily()): DailyDeltas {
  if (d.subscribed > 0) into.subscribed += 1;
  if (d.subscribed < 0) {
    into.unsubscribed += 1;
    const cause = CAUSES.find((c) => d[c] > 0);
    if (cause) into[cause] += 1;
  }
  into.net += d.subscribed;
  return into;
}

/** The day's counts of subscriptions deleted (users/delete). */
export function dailyOfDeletions(deleted: Array<Pick<SubscriberState, 'subscribed'>>, into: DailyDeltas = zeroDaily()): DailyDeltas {
  for (const item of deleted) {
    into.deleted += 1;
    if (item.subscribed) into.net -= 1;
  }
  return into;
}

export function addDaily(into: DailyDeltas, more: DailyDeltas): DailyDeltas {
  for (const name of DAILY_NAMES) into[name] += more[name];
  return into;
}

/** The UTC day (YYYY-MM-DD) of an ISO time. */
export const dayOf = (iso: string) => iso.slice(0, 10);

/** The transaction item adding `daily` to the list's day shard, or undefined when nothing moves. */
export function dailyUpdate(clientId: string, listId: number, day: string, shard: number, daily: DailyDeltas) {
  const moved = DAILY_NAMES.filter((name) => daily[name] !== 0);
  if (moved.length === 0) return undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: keys.listDayShard(clientId, listId, day, shard),
      UpdateExpression: `SET #day = :day ADD ${moved.map((_, i) => `#d${i} :d${i}`).join(', ')}`,
      ExpressionAttributeNames: { '#day': 'day', ...Object.fromEntries(moved.map((name, i) => [`#d${i}`, name])) },
      ExpressionAttributeValues: { ':day': day, ...Object.fromEntries(moved.map((name, i) => [`:d${i}`, daily[name]])) },
    },
  };
}
