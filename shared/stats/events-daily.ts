/**
 * A client's events per UTC day and type, counted by the assemblers into one item per client and day: the hourly job
 * SETs each built hour's rows, the daily job the day file's (a rebuild overwrites). A day counts its file's rows once
 * built, else the sum of its built hours.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, queryAll, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { AssembleSummary } from '../events/daily.js';
import { eventNames, type EventName } from '../events/types.js';
import { daysBetween, type DateRange } from './range.js';
import type { EventsDay } from './schemas.js';

/** Sets the rows of built hours of one client, event and day (the hourly job). */
export async function recordHourCounts(clientId: string, event: EventName, day: string, hours: Array<{ hour: string; events: number }>): Promise<void> {
  if (hours.length === 0) return;
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.eventDayCounts(clientId, day),
      UpdateExpression: `SET #day = :day, ${hours.map((_, i) => `#h${i} = :h${i}`).join(', ')}`,
      ExpressionAttributeNames: { '#day': 'day', ...Object.fromEntries(hours.map((h, i) => [`#h${i}`, `h_${event}_${h.hour}`])) },
      ExpressionAttributeValues: { ':day': day, ...Object.fromEntries(hours.map((h, i) => [`:h${i}`, h.events])) },
    }),
  );
}

/** Sets the rows of the day's file of one client and event (the daily job, when it built the file). */
export async function recordDayCount(clientId: string, event: EventName, day: string, events: number): Promise<void> {
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.eventDayCounts(clientId, day),
      UpdateExpression: 'SET #day = :day, #d = :n',
      ExpressionAttributeNames: { '#day': 'day', '#d': `d_${event}` },
      ExpressionAttributeValues: { ':day': day, ':n': events },
    }),
  );
}

/**
 * The day counts of the files a daily assembly built (`events` set: the rows of a file built now; a file kept
 * up to date was counted when it was built).
 */
export async function recordAssembledDays(files: AssembleSummary['files']): Promise<void> {
  for (const f of files) if (f.events !== undefined) await recordDayCount(f.clientId, f.event, f.day, f.events);
}

/** The client's counts of the days `from`..`to`, oldest first (one Query). */
export async function eventsDaily(clientId: string, range: DateRange): Promise<EventsDay[]> {
  const items = await queryAll<Record<string, unknown> & { day: string }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': keys.eventDayCountsPartition(clientId), ':from': keys.eventDayCounts(clientId, range.from).sk, ':to': keys.eventDayCounts(clientId, range.to).sk },
  });
  const byDay = new Map(items.map((i) => [i.day, i]));
  return daysBetween(range.from, range.to).map((date) => {
    const item: Record<string, unknown> = byDay.get(date) ?? {};
    const counts = Object.fromEntries(
      eventNames.map((event) => {
        const file = item[`d_${event}`];
        if (file !== undefined) return [event, Number(file)];
        const prefix = `h_${event}_`;
        return [event, Object.entries(item).reduce((sum, [name, n]) => (name.startsWith(prefix) ? sum + Number(n) : sum), 0)];
      }),
    ) as Record<EventName, number>;
    return { date, counts };
  });
}
