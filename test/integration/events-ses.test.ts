import { describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { utcDay } from '../../shared/events/days.js';
import { jobList } from '../../shared/jobs.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { sesFixture, snsEvent } from '../fixtures/ses/fixtures.js';
import { newClient, request, useService, type TestClient } from '../helpers/service.js';

const service = useService();
const ingest = (event: object) => invokeJob(jobList.find((j) => j.id === 'sesEvents')!, event) as Promise<{ events: number; unsubscribed: number; ignored: string[] }>;
const today = () => utcDay(new Date());
const lines = async (client: TestClient, event: string) => {
  const reply = await request(`${service.url}/v1/newsletters/events/${event}/${today()}`, { token: client.token });
  expect(reply.status).toBe(200);
  return reply.text.split('\r\n').slice(1, -1);
};

function notification(name: Parameters<typeof sesFixture>[0], client: TestClient, email: string) {
  const n = sesFixture(name, { client: client.username, list: String(client.defaultListId) });
  const now = new Date().toISOString();
  n.mail.timestamp = now;
  n.mail.destination = [email];
  for (const part of ['bounce', 'complaint', 'open', 'click']) if (n[part]) n[part].timestamp = now;
  for (const r of n.bounce?.bouncedRecipients ?? n.complaint?.complainedRecipients ?? []) r.emailAddress = email;
  return n;
}

describe('SES delivery-event ingester', () => {
  it('records each SNS message once, however often SNS delivers it', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const event = snsEvent([notification('send', client, 'once@x.io')], ['sns-message-1']);
    expect(await ingest(event)).toMatchObject({ events: 1 });
    expect(await ingest(event)).toMatchObject({ events: 1 });
    expect(await lines(client, 'nl_send')).toHaveLength(1);
  });

  it('drops notifications of unknown clients without writing anything', async () => {
    const n = sesFixture('send', { client: 'no-such-client-x1' });
    expect(await ingest(snsEvent([n]))).toMatchObject({ events: 0, ignored: ['unknown client no-such-client-x1'] });
  });

  it('a hard bounce unsubscribes the address from the tagged list with cause HARD_BOUNCE (counts exact, once per SNS message) and records nl_bounce and nl_unsubscribe', async () => {
    const client = await newClient(service, { premiumEvents: true });
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'gone@x.io', subscribed: true }]);
    const bounce = snsEvent([notification('bounce-permanent', client, 'gone@x.io')]);
    expect(await ingest(bounce)).toMatchObject({ events: 1, unsubscribed: 1 });
    expect(await getSubscriber(client.username, client.defaultListId, 'gone@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'HARD_BOUNCE' });
    expect(await ingest(bounce)).toMatchObject({ unsubscribed: 0 });
    const count = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { token: client.token });
    expect(count.body).toEqual({ subscribed: 0, unsubscribed: 1, cause: { HARD_BOUNCE: 1, PUBLISHER: 0, READER: 0 } });
    const bounces = await lines(client, 'nl_bounce');
    expect(bounces).toHaveLength(1);
    expect(bounces[0]).toMatch(/,gone@x\.io,cmp-42,nl-7,\d+,hard,smtp; 550 5\.1\.1 user unknown$/);
    const unsubscribes = await lines(client, 'nl_unsubscribe');
    expect(unsubscribes).toHaveLength(1);
    expect(unsubscribes[0]).toMatch(new RegExp(`,gone@x\\.io,HARD_BOUNCE,${client.defaultListId}$`));
  });

  it('a soft bounce changes nothing; a complaint unsubscribes with cause READER', async () => {
    const client = await newClient(service, { premiumEvents: true });
    await applySubscribers(client.username, client.defaultListId, [
      { line: 1, email: 'soft@x.io', subscribed: true },
      { line: 2, email: 'angry@x.io', subscribed: true },
    ]);
    expect(await ingest(snsEvent([notification('bounce-transient', client, 'soft@x.io')]))).toMatchObject({ unsubscribed: 0 });
    expect(await getSubscriber(client.username, client.defaultListId, 'soft@x.io')).toMatchObject({ subscribed: true });
    expect(await ingest(snsEvent([notification('complaint', client, 'angry@x.io')]))).toMatchObject({ events: 1, unsubscribed: 1 });
    expect(await getSubscriber(client.username, client.defaultListId, 'angry@x.io')).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    const count = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { token: client.token });
    expect(count.body).toEqual({ subscribed: 1, unsubscribed: 1, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 1 } });
    expect(await lines(client, 'nl_complaint')).toEqual([expect.stringMatching(/,angry@x\.io,cmp-42,nl-7,\d+,abuse$/)]);
  });
});
