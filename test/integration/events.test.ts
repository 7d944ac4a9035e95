import { parseCsv } from '../helpers/csv.js';
import { afterEach, describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { daysBefore, utcDay } from '../../shared/events/days.js';
import { recordEvents } from '../../shared/events/record.js';
import type { SesNotification } from '../../shared/events/ses.js';
import { eventColumns, eventNames, type EventName, type EventRecord } from '../../shared/events/types.js';
import { jobList } from '../../shared/jobs.js';
import { sesFixture, snsEvent } from '../fixtures/ses/fixtures.js';
import { newClient, request, useService, type TestClient } from '../helpers/service.js';

const service = useService();
const job = (id: string) => jobList.find((j) => j.id === id)!;
const assemble = (event: object) => invokeJob(job('eventsAssemble'), event) as Promise<{ days: string[]; files: Array<{ event: string; events?: number; upToDate: boolean }> }>;
const ingest = (event: object) => invokeJob(job('sesEvents'), event) as Promise<{ events: number; unsubscribed: number; ignored: string[] }>;


const download = (client: TestClient, event: string, day: string) => request(`${service.url}/v1/newsletters/events/${event}/${day}`, { token: client.token });

/** A notification with every timestamp moved to `iso`. */
function at(n: SesNotification, iso: string) {
  n.mail.timestamp = iso;
  for (const part of ['open', 'click', 'bounce', 'complaint'] as const) if (n[part]) n[part].timestamp = iso;
  return n;
}

const PAST = '2026-03-10';
const t = (hms: string) => `${PAST}T${hms}.000Z`;

afterEach(() => {
  delete process.env.EVENTS_INLINE_MAX_BYTES;
});

describe('GET /v1/newsletters/events/{event_name}/{date}', () => {
  it('needs a token, and the premium feature (403 otherwise)', async () => {
    const plain = await newClient(service);
    expect((await request(`${service.url}/v1/newsletters/events/nl_click/${PAST}`)).status).toBe(401);
    const reply = await download(plain, 'nl_click', PAST);
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({ status: 403, cause: expect.stringMatching(/premium/) as string });
  });

  it('answers 400 for an unknown event, a malformed date and a future date', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const tomorrow = daysBefore(utcDay(new Date()), -1);
    for (const [event, day, cause] of [
      ['nl_open', PAST, /^path\.event_name: event_name must be one of nl_click, /],
      ['nl_click', '2026-3-10', /^path\.date: date must be a day written YYYY-MM-DD/],
      ['nl_click', '2026-02-30', /^path\.date: date is not a calendar day/],
      ['nl_click', tomorrow, /in the future/],
    ] as const) {
      const reply = await download(client, event, day);
      expect(reply.status, `${event}/${day}`).toBe(400);
      expect(reply.body).toEqual({ status: 400, cause: expect.stringMatching(cause) as string });
    }
  });

  it('serves a day of mixed events as seven files with exactly the §6 columns and lines, sorted by date; client B gets none of them', async () => {
    const a = await newClient(service, { premiumEvents: true });
    const b = await newClient(service, { premiumEvents: true });
    const list = String(a.defaultListId);
    const fixture = (name: Parameters<typeof sesFixture>[0], iso: string, email: string) => {
      const n = at(sesFixture(name, { client: a.username, list }), iso);
      n.mail.destination = [email];
      for (const r of n.bounce?.bouncedRecipients ?? n.complaint?.complainedRecipients ?? []) r.emailAddress = email;
      return n;
    };
    const notSpam = fixture('complaint', t('16:00:00'), 'c@x.io');
    notSpam.complaint!.complaintFeedbackType = 'not-spam';
    const ingested = await ingest(
      snsEvent([
        fixture('send', t('09:00:02'), 's2@x.io'),
        fixture('send', t('09:00:01'), 's1@x.io'),
        fixture('open', t('10:30:00'), 's1@x.io'),
        fixture('click', t('10:31:00'), 's1@x.io'),
        fixture('bounce-transient', t('09:05:00'), 'soft@x.io'),
        notSpam,
        fixture('delivery', t('09:00:03'), 's1@x.io'),
      ]),
    );
    expect(ingested).toMatchObject({ events: 6, unsubscribed: 0 });
    const direct: EventRecord[] = [
      { event: 'nl_subscribe', date: t('23:59:59'), email: 'late@x.io', email_list_id: 1 },
      { event: 'nl_subscribe', date: t('00:00:00'), email: 'early@x.io', email_list_id: 1 },
      { event: 'nl_unsubscribe', date: t('12:00:00'), email: 'u@x.io', cause: 'READER', email_list_id: 1 },
      { event: 'nl_bounce', date: t('08:00:00'), email: 'hard@x.io', campaign_id: 'c,1', newsletter_id: 'n"1', email_list_id: 1, type: 'hard', message: 'line1\nline2' },
    ];
    await recordEvents(a.username, direct);
    await recordEvents(b.username, [{ event: 'nl_click', date: t('11:00:00'), email: 'b-only@b.example', target_url: 'https://b.example/' }]);

    const run = await assemble({ date: PAST, clients: [a.username] });
    expect(run.days).toEqual([PAST]);
    expect(run.files.map((f) => [f.event, f.events]).sort()).toEqual(
      [['nl_bounce', 2], ['nl_click', 1], ['nl_complaint', 1], ['nl_display', 1], ['nl_send', 2], ['nl_subscribe', 2], ['nl_unsubscribe', 1]].sort(),
    );

    const expected: Record<EventName, string[][]> = {
      nl_send: [
        [`${PAST} 09:00:01`, 's1@x.io', 'cmp-42', 'nl-7', list],
        [`${PAST} 09:00:02`, 's2@x.io', 'cmp-42', 'nl-7', list],
      ],
      nl_display: [[`${PAST} 10:30:00`, 's1@x.io', 'cmp-42', 'nl-7', list]],
      nl_click: [[`${PAST} 10:31:00`, 's1@x.io', 'cmp-42', 'nl-7', list, 'article-1', 'https://www.example.com/articles/1?utm_source=nl,weekly', '3']],
      nl_subscribe: [
        [`${PAST} 00:00:00`, 'early@x.io', '1'],
        [`${PAST} 23:59:59`, 'late@x.io', '1'],
      ],
      nl_unsubscribe: [[`${PAST} 12:00:00`, 'u@x.io', 'READER', '1']],
      nl_bounce: [
        [`${PAST} 08:00:00`, 'hard@x.io', 'c,1', 'n"1', '1', 'hard', 'line1\nline2'],
        [`${PAST} 09:05:00`, 'soft@x.io', 'cmp-42', 'nl-7', list, 'soft', 'smtp; 452 4.2.2 Mailbox full, "try later"'],
      ],
      nl_complaint: [[`${PAST} 16:00:00`, 'c@x.io', 'cmp-42', 'nl-7', list, 'not-spam']],
    };
    for (const event of eventNames) {
      const reply = await download(a, event, PAST);
      expect(reply.status, event).toBe(200);
      expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(reply.headers.get('content-disposition')).toBe(`attachment; filename="${event}_${PAST}.csv"`);
      expect(reply.headers.get('x-events-incomplete')).toBe('false');
      const [header, ...rows] = await parseCsv(reply.text);
      expect(header, event).toEqual([...eventColumns[event]]);
      expect(rows, event).toEqual(expected[event]);
      const fromB = await download(b, event, PAST);
      expect(fromB.status).toBe(200);
      expect(fromB.text, `B's ${event}`).not.toContain('@x.io');
    }
    const bClicks = await parseCsv((await download(b, 'nl_click', PAST)).text);
    expect(bClicks.slice(1).map((r) => r[1])).toEqual(['b-only@b.example']);
  });

  it('re-running the job gives the same file; late raw records are picked up by a re-run and by the nightly late-day check', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const day = '2026-03-11';
    await recordEvents(client.username, [{ event: 'nl_send', date: `${day}T10:00:00.000Z`, email: 'one@x.io' }]);
    const first = await assemble({ date: day, clients: [client.username] });
    expect(first.files).toMatchObject([{ event: 'nl_send', events: 1, upToDate: false }]);
    const before = (await download(client, 'nl_send', day)).text;
    const again = await assemble({ date: day, clients: [client.username] });
    expect(again.files).toMatchObject([{ event: 'nl_send', upToDate: true }]);
    await assemble({ date: day, clients: [client.username], force: true });
    expect((await download(client, 'nl_send', day)).text).toBe(before);

    await recordEvents(client.username, [{ event: 'nl_send', date: `${day}T09:00:00.000Z`, email: 'late@x.io' }]);
    await assemble({ date: day, clients: [client.username] });
    const rows = (await parseCsv((await download(client, 'nl_send', day)).text)).slice(1);
    expect(rows.map((r) => r[1])).toEqual(['late@x.io', 'one@x.io']);

    await recordEvents(client.username, [{ event: 'nl_send', date: `${day}T23:00:00.000Z`, email: 'later@x.io' }]);
    const nightly = await assemble({ time: `${daysBefore(day, -3)}T00:15:00Z`, clients: [client.username] });
    expect(nightly.days).toEqual([daysBefore(day, -2), daysBefore(day, -1), day, daysBefore(day, 1)]);
    const after = (await parseCsv((await download(client, 'nl_send', day)).text)).slice(1);
    expect(after.map((r) => r[1])).toEqual(['late@x.io', 'one@x.io', 'later@x.io']);
  });

  it('finds by itself the clients with raw records of the day when no client is named', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const day = '2026-03-16';
    await recordEvents(client.username, [{ event: 'nl_display', date: `${day}T07:00:00.000Z`, email: 'seen@x.io' }]);
    const run = await assemble({ date: day });
    expect(run.files.filter((f) => (f as { clientId?: string }).clientId === client.username)).toMatchObject([{ event: 'nl_display', events: 1, upToDate: false }]);
  });

  it('assembles a closed day on request when the job has not run yet; a day without events is the header alone', async () => {
    const client = await newClient(service, { premiumEvents: true });
    await recordEvents(client.username, [{ event: 'nl_subscribe', date: '2026-03-12T10:00:00.000Z', email: 'x@x.io', email_list_id: 1 }]);
    const built = await download(client, 'nl_subscribe', '2026-03-12');
    expect(built.text).toBe('date,email,email_list_id\r\n2026-03-12 10:00:00,x@x.io,1\r\n');
    const empty = await download(client, 'nl_subscribe', '2026-03-13');
    expect(empty.status).toBe(200);
    expect(empty.text).toBe('date,email,email_list_id\r\n');
    expect(empty.headers.get('x-events-incomplete')).toBe('false');
  });

  it("serves today's events so far, assembled on the fly and marked incomplete", async () => {
    const client = await newClient(service, { premiumEvents: true });
    const today = utcDay(new Date());
    const now = Date.now();
    await recordEvents(client.username, [{ event: 'nl_display', date: new Date(now - 1000).toISOString(), email: 'first@x.io', campaign_id: 'c' }]);
    const first = await download(client, 'nl_display', today);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-events-incomplete')).toBe('true');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect((await parseCsv(first.text)).slice(1).map((r) => r[1])).toEqual(['first@x.io']);
    await recordEvents(client.username, [{ event: 'nl_display', date: new Date(now).toISOString(), email: 'second@x.io', campaign_id: 'c' }]);
    const second = await download(client, 'nl_display', today);
    expect((await parseCsv(second.text)).slice(1).map((r) => r[1])).toEqual(['first@x.io', 'second@x.io']);
    const none = await download(client, 'nl_click', today);
    expect(none.text).toBe(`${eventColumns.nl_click.join(',')}\r\n`);
    expect(none.headers.get('x-events-incomplete')).toBe('true');
  });

  it('redirects to a short-lived presigned S3 URL when the file is larger than EVENTS_INLINE_MAX_BYTES', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const day = '2026-03-14';
    await recordEvents(
      client.username,
      Array.from({ length: 50 }, (_, i) => ({ event: 'nl_send' as const, date: `${day}T10:00:${String(i).padStart(2, '0')}.000Z`, email: `r${i}@x.io` })),
    );
    const small = await download(client, 'nl_send', day);
    expect(small.status).toBe(200);
    process.env.EVENTS_INLINE_MAX_BYTES = '500';
    const big = await download(client, 'nl_send', day);
    expect(big.status).toBe(302);
    const location = big.headers.get('location')!;
    expect(location).toMatch(/X-Amz-Expires=300/);
    expect(location).toContain(`events/${client.username}/nl_send/${day}.csv`);
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe(small.text);
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="nl_send_${day}.csv"`);
  });

  it('a closed day assembled by the job is formula-safe, inline and presigned alike; raw=true serves (and builds on demand) the recorded values', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const day = '2026-03-15';
    // A subscriber added through the API whose address starts with "+" (valid: atext), and a click target that is a formula.
    const added = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, { method: 'POST', token: client.token, body: { email: '+1+cmd@x.io', subscribed: true } });
    expect(added.status).toBe(200);
    const todayFile = await parseCsv((await download(client, 'nl_subscribe', utcDay(new Date()))).text);
    expect(todayFile[1][1]).toBe("'+1+cmd@x.io");
    await recordEvents(client.username, [
      { event: 'nl_click', date: `${day}T10:00:00.000Z`, email: '-dash@x.io', target_url: "=cmd|' /C calc'!A0", target_id: '@x' },
      { event: 'nl_click', date: `${day}T11:00:00.000Z`, email: 'plain@x.io', target_url: 'https://x.io/?a=1' },
    ]);
    await assemble({ day, clients: [client.username] });
    const safe = await download(client, 'nl_click', `${day}`);
    expect((await parseCsv(safe.text)).slice(1).map((r) => [r[1], r[5], r[6]])).toEqual([
      ["'-dash@x.io", "'@x", "'=cmd|' /C calc'!A0"],
      ['plain@x.io', '', 'https://x.io/?a=1'],
    ]);
    const raw = await request(`${service.url}/v1/newsletters/events/nl_click/${day}?raw=true`, { token: client.token });
    expect((await parseCsv(raw.text)).slice(1).map((r) => [r[1], r[5], r[6]])).toEqual([
      ['-dash@x.io', '@x', "=cmd|' /C calc'!A0"],
      ['plain@x.io', '', 'https://x.io/?a=1'],
    ]);
    // Large files come from S3: the presigned object is the escaped file, or the raw one when asked for.
    process.env.EVENTS_INLINE_MAX_BYTES = '50';
    const big = await download(client, 'nl_click', day);
    expect(await (await fetch(big.headers.get('location')!)).text()).toBe(safe.text);
    const bigRaw = await request(`${service.url}/v1/newsletters/events/nl_click/${day}?raw=true`, { token: client.token });
    expect(bigRaw.status).toBe(302);
    expect(await (await fetch(bigRaw.headers.get('location')!)).text()).toBe(raw.text);
    // A late record reaches the raw file too (its sources are checked on every request).
    await recordEvents(client.username, [{ event: 'nl_click', date: `${day}T12:00:00.000Z`, email: '=late@x.io', target_url: 'https://x.io/' }]);
    const lateRaw = await request(`${service.url}/v1/newsletters/events/nl_click/${day}?raw=true`, { token: client.token });
    expect(await (await fetch(lateRaw.headers.get('location')!)).text()).toContain('=late@x.io');
    expect((await request(`${service.url}/v1/newsletters/events/nl_click/${day}?raw=maybe`, { token: client.token })).body).toEqual({ status: 400, cause: 'query.raw: must be true or false' });
  });
});
