/**
 * GET /v1/stats/events/daily through the local gateway: a client's events of a past day, stored as the
 * service stores them (several raw objects an hour, a redelivered one whose rows the files drop), counted by
 * the hourly job's hours, then by the daily job's files; each count equal to the rows of the file the
 * download serves for that day. Another client's events are not counted.
 */
import { describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { recordEvents } from '../../shared/events/record.js';
import { EVENT_ID_FIELD, eventNames, type EventRecord } from '../../shared/events/types.js';
import { jobList } from '../../shared/jobs.js';
import { parseCsv } from '../helpers/csv.js';
import { newClient, request, useService, type ApiBody, type TestClient } from '../helpers/service.js';

const service = useService();
const job = (id: string, event: object) => invokeJob(jobList.find((j) => j.id === id)!, event);

const DAY = '2026-04-20';
const NEXT = '2026-04-21';

/** How many records of each type, per hour, for one client of the test. */
const plan: Array<[EventRecord['event'], string, number]> = [
  ['nl_send', '08', 5],
  ['nl_send', '09', 3],
  ['nl_display', '09', 2],
  ['nl_click', '10', 4],
  ['nl_subscribe', '11', 1],
  ['nl_unsubscribe', '23', 2],
  ['nl_bounce', '00', 1],
];

async function record(clientId: string, day: string, redeliver = false) {
  for (const [event, hh, n] of plan) {
    const records = Array.from({ length: n }, (_, i) => ({
      event,
      date: `${day}T${hh}:${String(i).padStart(2, '0')}:00.000Z`,
      email: `r${i}@x.io`,
      campaign_id: 'c1',
      email_list_id: 1,
      cause: 'READER',
      [EVENT_ID_FIELD]: `${event}-${day}-${hh}-${i}`,
    })) as EventRecord[];
    await recordEvents(clientId, records);
    // The same records stored again (a retried store): the files hold them once.
    if (redeliver) await recordEvents(clientId, records);
  }
}

const stats = (client: TestClient, query: string) => request<ApiBody<'statsEventsDaily'>>(`${service.url}/v1/stats/events/daily?${query}`, { token: client.token });

/** The rows of the file the download serves, per event type. */
async function fileRows(client: TestClient, day: string) {
  const out: Record<string, number> = {};
  for (const event of eventNames) {
    const reply = await request(`${service.url}/v1/newsletters/events/${event}/${day}`, { token: client.token });
    expect(reply.status, reply.text).toBe(200);
    out[event] = (await parseCsv(reply.text)).length - 1;
  }
  return out;
}

const expected = Object.fromEntries(eventNames.map((e) => [e, plan.filter(([p]) => p === e).reduce((n, [, , k]) => n + k, 0)]));
const none = Object.fromEntries(eventNames.map((e) => [e, 0]));

describe('GET /v1/stats/events/daily', () => {
  it("counts each day's events as its assembled files hold them: the hours built, then the day's files", async () => {
    const client = await newClient(service, { premiumEvents: true });
    const other = await newClient(service, { premiumEvents: true });
    await record(client.username, DAY, true);
    await record(other.username, DAY);
    await record(other.username, NEXT);
    const range = `from=${DAY}&to=${NEXT}`;

    // Nothing assembled yet: nothing counted (the counts come from the assemblers, not from the raw records).
    expect((await stats(client, range)).body).toEqual([{ date: DAY, counts: none }, { date: NEXT, counts: none }]);

    // The hourly job builds the day's hours: their rows.
    await job('eventsAssembleHours', { date: DAY, clients: [client.username] });
    expect((await stats(client, range)).body).toEqual([{ date: DAY, counts: expected }, { date: NEXT, counts: none }]);

    // The daily job builds the day's files: their rows, which the download serves.
    await job('eventsAssemble', { date: DAY, clients: [client.username] });
    const reply = await stats(client, range);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body[0]).toEqual({ date: DAY, counts: await fileRows(client, DAY) });
    expect(reply.body[0].counts).toEqual(expected);

    // A late record: the rebuilt file counts it.
    await recordEvents(client.username, [{ event: 'nl_click', date: `${DAY}T15:00:00.000Z`, email: 'late@x.io', campaign_id: 'c1' }]);
    await job('eventsAssemble', { date: DAY, clients: [client.username] });
    const after = (await stats(client, range)).body[0];
    expect(after.counts).toEqual({ ...expected, nl_click: expected.nl_click + 1 });
    expect(after.counts).toEqual(await fileRows(client, DAY));
  });

  it('refuses bad ranges (400 naming the field) and requests without a token (401)', async () => {
    const client = await newClient(service);
    expect((await request(`${service.url}/v1/stats/events/daily?from=${NEXT}&to=${DAY}`, { token: client.token })).body).toEqual({ status: 400, cause: 'query: from must not be after to' });
    expect((await request(`${service.url}/v1/stats/events/daily?from=${DAY}`, { token: client.token })).status).toBe(400);
    expect((await request(`${service.url}/v1/stats/events/daily?from=${DAY}&to=${NEXT}`)).status).toBe(401);
  });
});
