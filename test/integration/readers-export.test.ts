/**
 * Consent records and the export of a reader's data, each through the real
 * path that makes them (the API, an import by URL, the opt-in confirmation,
 * SES bounces and complaints, one-click, the preference centre, tracking and
 * the preferences route), read back through GET /v1/users/export.
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createGateway, listen } from '../../infra/local/gateway.js';
import { sha256 } from '../../shared/auth/secrets.js';
import { createForm } from '../../shared/clients/clients.js';
import { ddb, queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createList } from '../../shared/lists/lists.js';
import { MAX_CONSENT_RECORDS } from '../../shared/subscribers/rules.js';
import { snsEvent } from '../fixtures/ses/fixtures.js';
import { confirmationLink, mailsTo, newEmail } from '../helpers/optin.js';
import { ingestSes, sesNotification } from '../helpers/ses.js';
import { newClient, request, useService, type ApiBody, type TestClient } from '../helpers/service.js';
import { importByUrl, useLoopbackImports } from './imports-helpers.js';

const service = useService();
const loopback = useLoopbackImports();
/** IPv6 loopback is not on every machine: the IPv6 test is skipped (and reported so) without it. */
const ipv6Loopback = await canListen('::1');

type Export = ApiBody<'usersExport'>;
type Consent = Export['memberships'][number]['consent'][number];

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const exportOf = (client: TestClient, email: string) => request<Export>(`${service.url}/v1/users/export?email=${encodeURIComponent(email)}`, { token: client.token });

/** The export of an address the client keeps something about (200). */
async function exported(client: TestClient, email: string): Promise<Export> {
  const reply = await exportOf(client, email);
  expect(reply.status, reply.text).toBe(200);
  expect(reply.headers.get('cache-control')).toBe('no-store');
  return reply.body;
}

/** The consent records of one membership as the export gives them. */
async function consentOf(client: TestClient, listId: number, email: string): Promise<Consent[]> {
  const membership = (await exported(client, email)).memberships.find((m) => m.list_id === listId);
  if (!membership) throw new Error(`${email} is not in list ${listId}`);
  return membership.consent;
}

/** POST …/lists/<id>/subscribers: the list API (one call, any number of lines). */
async function postSubscribers(client: TestClient, listId: number, body: unknown[]) {
  const reply = await request<ApiBody<'subscribersPost'>>(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { method: 'POST', token: client.token, body });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** The subscriber's links as the list's listing gives them. */
async function linksOf(client: TestClient, listId: number, email: string) {
  const items = (await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { token: client.token })).body;
  const item = items.find((s) => s.email === email)!;
  return { unsubscribe: item.unsubscribe_url, preferences: item.preferences_url };
}

const form = (url: string, body: string, userAgent: string) =>
  request(url, { method: 'POST', raw: body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': userAgent } });
const oneClick = (url: string, userAgent: string) => form(url, 'List-Unsubscribe=One-Click', userAgent);

/** The stored item of a confirmation link (kept under the SHA-256 of its token), if any. */
async function linkItem(link: string) {
  const token = link.split('/').at(-1)!;
  return (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.optinToken(sha256(token)), ConsistentRead: true }))).Item;
}

/** Submits the client's opt-in form for `email` (not confirmed). */
async function submitOptin(client: TestClient, formKey: string, email: string, data: Record<string, string> = {}) {
  const reply = await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email, form_key: formKey, ...data } });
  expect(reply.status, reply.text).toBe(200);
}

/** Times in a record are the service's clock, read between `before` and now. */
const within = (before: number) => expect.toSatisfy((at: string) => ISO_MS.test(at) && Date.parse(at) >= before - 1 && Date.parse(at) <= Date.now() + 1) as string;
const isoTime = () => expect.stringMatching(ISO_MS) as string;

/** A record of a change made without a browser (API, import, SES): no address, no user agent. */
const serverRecord = (fields: Partial<Consent>) => ({ at: isoTime(), cause: null, ip: null, user_agent: null, ...fields });

describe('GET /v1/users/export: memberships, pending opt-ins and reading data', () => {
  it("gives memberships with data and consent, a pending opt-in and the reading history and preferences of the reader's guid; another client gets 404; after users/delete, nothing", async () => {
    const client = await newClient(service, { siteHosts: ['news.example.com'] });
    const email = newEmail('export');
    const weekly = await createList(client.username, 'Weekly');
    const offers = await createList(client.username, 'Offers');
    const offersForm = await createForm(client.username, { listIds: [offers.id], global: false });
    // (a) two memberships with data: one with the guid the publisher tracks its reader by, one with the default guid.
    await postSubscribers(client, client.defaultListId, [{ email, guid: 'reader-42', data_city: 'Lyon' }]);
    await postSubscribers(client, weekly.id, [{ email, data_plan: 'pro' }]);
    // (b) a pending opt-in: the form submitted, the link never followed.
    const submittedAfter = Date.now();
    await submitOptin(client, offersForm, email, { data_first_name: 'Ann' });
    // (c) reading history (tracking) and theme preferences under the same id.
    const track = await request(`${service.url}/v1/track/${client.trackingKey}`, {
      method: 'POST',
      body: { user_id: 'reader-42', url: 'https://news.example.com/story?utm_source=x', title: 'A story', themes: ['Cooking'] },
    });
    expect(track.status, track.text).toBe(200);
    const articleGuid = (track.body as { guid: string }).guid;
    expect((await request(`${service.url}/v1/users/reader-42/preferences`, { method: 'PUT', token: client.token, body: { themes: ['Gardening'] } })).status).toBe(200);
    await service.drain();

    const body = await exported(client, email.toUpperCase());
    expect(body.email).toBe(email);
    expect(body.memberships).toEqual([
      {
        list_id: client.defaultListId,
        subscribed: true,
        unsubscribed_cause: null,
        guid: 'reader-42',
        previous_guids: [],
        subscribed_at: isoTime(),
        data: { data_city: 'Lyon' },
        consent: [serverRecord({ subscribed: true, source: 'api' })],
      },
      {
        list_id: weekly.id,
        subscribed: true,
        unsubscribed_cause: null,
        guid: md5(email),
        previous_guids: [],
        subscribed_at: isoTime(),
        data: { data_plan: 'pro' },
        consent: [serverRecord({ subscribed: true, source: 'api' })],
      },
    ]);
    expect(body.pending_optins).toEqual([{ form_key: offersForm, list_ids: [offers.id], data: { data_first_name: 'Ann' }, created_at: within(submittedAfter), expires_at: isoTime() }]);
    expect(Date.parse(body.pending_optins[0].expires_at)).toBeGreaterThan(Date.parse(body.pending_optins[0].created_at));
    expect(body.readers).toEqual([
      {
        guid: 'reader-42',
        history: expect.objectContaining({ userId: 'reader-42', reads: [expect.objectContaining({ g: articleGuid }) as unknown], tastes: { cooking: expect.any(Number) as number } }) as unknown,
        preferences: expect.objectContaining({ userId: 'reader-42', themes: ['gardening'] }) as unknown,
      },
      { guid: md5(email), history: null, preferences: null },
    ]);
    // Keys and bookkeeping are left out of the copy.
    for (const part of [body.readers[0].history!, body.readers[0].preferences!]) for (const key of ['pk', 'sk', 'type', 'ttl', 'clientId']) expect(part).not.toHaveProperty(key);

    // Another client's token: this client's reader does not exist for it.
    const stranger = await newClient(service);
    const refused = await exportOf(stranger, email);
    expect(refused.status).toBe(404);
    expect(refused.text).not.toContain('reader-42');

    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    expect((await exportOf(client, email)).status).toBe(404);
    // Nothing is left behind under the export's answer either: memberships (with their consent records), the pending opt-in, the reader's data.
    const pending = await queryAll({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.optinPendingPartition(client.username, email) }, ConsistentRead: true });
    expect(pending).toEqual([]);
    for (const key of [keys.reader(client.username, 'reader-42'), keys.readerPreferences(client.username, 'reader-42'), keys.subscriber(client.username, client.defaultListId, email)]) {
      expect((await ddb.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item).toBeUndefined();
    }
  });

  it('a guid the publisher changed: the export gives the reading history under the old guids too, and users/delete deletes it', async () => {
    const client = await newClient(service, { siteHosts: ['news.example.com'] });
    const email = newEmail('regid');
    const track = async (userId: string, path: string) => {
      const reply = await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: userId, url: `https://news.example.com/${path}`, title: path } });
      expect(reply.status, reply.text).toBe(200);
    };
    await postSubscribers(client, client.defaultListId, [{ email, guid: 'old-7' }]);
    await track('old-7', 'first');
    // Changed by a single-subscriber write (the transactional path)...
    await postSubscribers(client, client.defaultListId, [{ email, guid: 'mid-7' }]);
    await track('mid-7', 'second');
    // ...and by a batch large enough for the bulk path, with other addresses.
    const others = Array.from({ length: 150 }, (_, i) => ({ email: newEmail(`regid-other${i}`) }));
    await postSubscribers(client, client.defaultListId, [...others, { email, guid: 'new-7' }]);
    await service.drain();

    const body = await exported(client, email);
    expect(body.memberships.map((m) => [m.guid, m.previous_guids])).toEqual([['new-7', ['mid-7', 'old-7']]]);
    expect(body.readers.map((r) => [r.guid, (r.history as { reads?: unknown[] } | null)?.reads?.length ?? 0])).toEqual([
      ['new-7', 0],
      ['mid-7', 1],
      ['old-7', 1],
    ]);
    // Back to an old guid: it is the current one again, not listed twice.
    await postSubscribers(client, client.defaultListId, [{ email, guid: 'old-7' }]);
    expect((await exported(client, email)).memberships[0]).toMatchObject({ guid: 'old-7', previous_guids: ['new-7', 'mid-7'] });

    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    for (const guid of ['old-7', 'mid-7', 'new-7']) {
      expect((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.reader(client.username, guid), ConsistentRead: true }))).Item, guid).toBeUndefined();
    }
  });

  it('an address with only a pending opt-in is exported (no memberships, no readers) and users/delete removes it: then 404', async () => {
    const client = await newClient(service);
    const email = newEmail('pending');
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    await submitOptin(client, formKey, email);
    const body = await exported(client, email);
    expect(body).toEqual({ email, memberships: [], pending_optins: [expect.objectContaining({ form_key: formKey, list_ids: [client.defaultListId], data: {} })], readers: [] });
    expect((await exportOf(await newClient(service), email)).status).toBe(404);
    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    expect((await exportOf(client, email)).status).toBe(404);
    // Nor does the link mailed for it keep the address and the submission; followed, it subscribes nobody.
    const link = confirmationLink((await mailsTo(email))[0]);
    expect(await linkItem(link)).toBeUndefined();
    expect((await request(link)).status).toBe(404);
    expect((await exportOf(client, email)).status).toBe(404);
  });

  it('users/delete of a reader who confirmed leaves no confirmation link holding the address, however many were mailed', async () => {
    const client = await newClient(service);
    const email = newEmail('confirmed');
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    await submitOptin(client, formKey, email, { data_first_name: 'Bo' });
    // A resubmission after the resend period mails a second link.
    process.env.OPTIN_RESEND_MINUTES = '0';
    try {
      await submitOptin(client, formKey, email, { data_first_name: 'Bo' });
    } finally {
      delete process.env.OPTIN_RESEND_MINUTES;
    }
    const links = (await mailsTo(email)).map(confirmationLink);
    expect(links).toHaveLength(2);
    expect((await request(links[1])).text).toContain('Subscription confirmed');
    for (const link of links) expect(await linkItem(link)).toMatchObject({ email });
    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    expect((await exportOf(client, email)).status).toBe(404);
    for (const link of links) {
      expect(await linkItem(link)).toBeUndefined();
      expect((await request(link)).status).toBe(404);
    }
    expect((await exportOf(client, email)).status).toBe(404);
  });
});

describe('consent records through the real paths, as the export shows them', () => {
  it('opt-in: source optin with the form key, when the form was submitted and confirmed, and the confirming request’s address and user agent', async () => {
    const client = await newClient(service);
    const email = newEmail('optin');
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    await submitOptin(client, formKey, email);
    const requestedAt = (await exported(client, email)).pending_optins[0].created_at;
    const confirmedAfter = Date.now();
    const page = await request(confirmationLink((await mailsTo(email))[0]), { headers: { 'user-agent': 'MailClient/3 (confirm)' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Subscription confirmed');
    const body = await exported(client, email);
    expect(body.pending_optins).toEqual([]);
    const [record, ...more] = body.memberships[0].consent;
    expect(more).toEqual([]);
    expect(record).toEqual({
      at: within(confirmedAfter),
      subscribed: true,
      cause: null,
      source: 'optin',
      form_key: formKey,
      requested_at: requestedAt,
      confirmed_at: within(confirmedAfter),
      ip: '127.0.0.1',
      user_agent: 'MailClient/3 (confirm)',
    });
    // The link was followed, then the change stored.
    expect(Date.parse(record.confirmed_at!)).toBeLessThanOrEqual(Date.parse(record.at));
  });

  it('SES: a hard bounce records source bounce with cause HARD_BOUNCE, a complaint source complaint with cause READER', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const [bounced, complained] = [newEmail('bounced'), newEmail('complained')];
    await postSubscribers(client, client.defaultListId, [{ email: bounced }, { email: complained }]);
    const before = Date.now();
    expect(await ingestSes(snsEvent([sesNotification('bounce-permanent', client, bounced)]))).toMatchObject({ unsubscribed: 1 });
    expect(await ingestSes(snsEvent([sesNotification('complaint', client, complained)]))).toMatchObject({ unsubscribed: 1 });
    // A soft bounce changes no status, so it keeps no record.
    expect(await ingestSes(snsEvent([sesNotification('bounce-transient', client, bounced)]))).toMatchObject({ unsubscribed: 0 });
    expect(await consentOf(client, client.defaultListId, bounced)).toEqual([
      serverRecord({ subscribed: true, source: 'api' }),
      serverRecord({ at: within(before), subscribed: false, cause: 'HARD_BOUNCE', source: 'bounce' }),
    ]);
    expect(await consentOf(client, client.defaultListId, complained)).toEqual([
      serverRecord({ subscribed: true, source: 'api' }),
      serverRecord({ at: within(before), subscribed: false, cause: 'READER', source: 'complaint' }),
    ]);
  });

  it('an import by URL records source import with the file id; a later API batch and the deprecated API record source api; a data-only change records nothing', async () => {
    const client = await newClient(service);
    const [kept, left] = [newEmail('imported'), newEmail('imported-off')];
    const { created, file } = await importByUrl(service, loopback.server, client, client.defaultListId, `email,subscribed,unsubscribed_cause\n${kept},true,\n${left},false,publisher\n`);
    expect(file.status).toBe('done');
    expect(await consentOf(client, client.defaultListId, kept)).toEqual([serverRecord({ subscribed: true, source: 'import', file_id: String(created.id) })]);
    expect(await consentOf(client, client.defaultListId, left)).toEqual([serverRecord({ subscribed: false, cause: 'PUBLISHER', source: 'import', file_id: String(created.id) })]);

    await postSubscribers(client, client.defaultListId, [
      { email: kept, subscribed: false, unsubscribed_cause: 'PUBLISHER' },
      { email: left, subscribed: true },
      { email: newEmail('api-new'), subscribed: true },
    ]);
    expect((await consentOf(client, client.defaultListId, kept)).slice(1)).toEqual([serverRecord({ subscribed: false, cause: 'PUBLISHER', source: 'api' })]);
    expect((await consentOf(client, client.defaultListId, left)).slice(1)).toEqual([serverRecord({ subscribed: true, source: 'api' })]);
    // The deprecated list-less API (the default list) records source api as well.
    const legacy = await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: { email: kept, subscribed: true } });
    expect(legacy.status, legacy.text).toBe(200);
    expect((await consentOf(client, client.defaultListId, kept)).slice(2)).toEqual([serverRecord({ subscribed: true, source: 'api' })]);
    // Data only, through the API and through another import: no change of status, no record.
    await postSubscribers(client, client.defaultListId, [{ email: left, data_city: 'Nantes' }]);
    await importByUrl(service, loopback.server, client, client.defaultListId, `email,data_city\n${left},Brest\n`);
    expect(await consentOf(client, client.defaultListId, left)).toHaveLength(2);
  });

  it('one-click records source unsubscribe_link and the preference centre source preferences, each with the address and user agent of the request', async () => {
    const client = await newClient(service);
    const email = newEmail('links');
    await postSubscribers(client, client.defaultListId, [{ email }]);
    const links = await linksOf(client, client.defaultListId, email);
    const before = Date.now();
    expect((await oneClick(links.unsubscribe, 'MailProvider/1.0 (one-click)')).status).toBe(200);
    expect((await form(links.preferences, `action=save&list=${client.defaultListId}`, 'Browser/2 (resubscribe)')).status).toBe(200);
    expect((await form(links.preferences, 'action=unsubscribe_all', 'Browser/2 (all)')).status).toBe(200);
    // A user agent is kept to its first 256 characters.
    expect((await form(links.preferences, `action=save&list=${client.defaultListId}`, `Long/${'x'.repeat(400)}`)).status).toBe(200);
    expect(await consentOf(client, client.defaultListId, email)).toEqual([
      serverRecord({ subscribed: true, source: 'api' }),
      { at: within(before), subscribed: false, cause: 'READER', source: 'unsubscribe_link', ip: '127.0.0.1', user_agent: 'MailProvider/1.0 (one-click)' },
      { at: within(before), subscribed: true, cause: null, source: 'preferences', ip: '127.0.0.1', user_agent: 'Browser/2 (resubscribe)' },
      { at: within(before), subscribed: false, cause: 'READER', source: 'preferences', ip: '127.0.0.1', user_agent: 'Browser/2 (all)' },
      { at: within(before), subscribed: true, cause: null, source: 'preferences', ip: '127.0.0.1', user_agent: `Long/${'x'.repeat(251)}` },
    ]);
  });

  it('records the address each request came from, not always the usual loopback one', async () => {
    const client = await newClient(service);
    const email = newEmail('ipv4');
    await postSubscribers(client, client.defaultListId, [{ email }]);
    const links = await linksOf(client, client.defaultListId, email);
    // From 127.0.0.2 (the whole of 127/8 is loopback): the gateway gives the handler the connection's address.
    expect(await postForm(links.unsubscribe, 'List-Unsubscribe=One-Click', { localAddress: '127.0.0.2' })).toBe(200);
    expect((await consentOf(client, client.defaultListId, email)).slice(1).map((c) => [c.source, c.ip])).toEqual([['unsubscribe_link', '127.0.0.2']]);
  });

  // A machine without IPv6 loopback skips this one (and says so in the run).
  it.skipIf(!ipv6Loopback)('records an IPv6 address as it came', async () => {
    const client = await newClient(service);
    const email = newEmail('ipv6');
    await postSubscribers(client, client.defaultListId, [{ email }]);
    const links = await linksOf(client, client.defaultListId, email);
    // A second gateway on [::1] in front of the same handlers.
    const v6 = createGateway();
    try {
      const port = await listen(v6, 0, '::1');
      const preferences = new URL(links.preferences);
      preferences.host = `[::1]:${port}`;
      expect(await postForm(preferences.href, 'action=unsubscribe_all', {})).toBe(200);
    } finally {
      await new Promise((done) => v6.close(done));
    }
    expect((await consentOf(client, client.defaultListId, email)).slice(1).map((c) => [c.source, c.ip])).toEqual([['preferences', '::1']]);
  });

  it(`keeps at most ${MAX_CONSENT_RECORDS} records per subscriber and list: the first and the latest, older ones in between dropped`, async () => {
    expect(MAX_CONSENT_RECORDS).toBe(10); // docs/api.md and docs/capacity.md say 10
    const client = await newClient(service);
    const other = await createList(client.username, 'Other');
    const email = newEmail('toggle');
    await postSubscribers(client, client.defaultListId, [{ email }]);
    await postSubscribers(client, other.id, [{ email }]);
    const links = await linksOf(client, client.defaultListId, email);
    // 13 changes of status: change 1 by the API, changes 2..13 by the reader, alternately leaving (one-click) and coming back (preferences).
    const changes = 13;
    for (let n = 2; n <= changes; n++) {
      const reply = n % 2 === 0 ? await oneClick(links.unsubscribe, `ua-${n}`) : await form(links.preferences, `action=save&list=${client.defaultListId}&list=${other.id}`, `ua-${n}`);
      expect(reply.status).toBe(200);
    }
    const records = await consentOf(client, client.defaultListId, email);
    expect(records).toHaveLength(10);
    expect(records[0]).toEqual(serverRecord({ subscribed: true, source: 'api' }));
    const latest = Array.from({ length: 9 }, (_, i) => changes - 8 + i);
    expect(records.slice(1).map((r) => [r.user_agent, r.subscribed, r.source])).toEqual(latest.map((n) => [`ua-${n}`, n % 2 === 1, n % 2 === 0 ? 'unsubscribe_link' : 'preferences']));
    expect(records.map((r) => r.at)).toEqual(records.map((r) => r.at).sort());
    // The other list's records are its own (the preference saves left it subscribed: no change, no record).
    expect(await consentOf(client, other.id, email)).toEqual([serverRecord({ subscribed: true, source: 'api' })]);
  });
});

/** POSTs an urlencoded form with node:http (which can choose the local address); the status. */
function postForm(url: string, body: string, o: { localAddress?: string }): Promise<number> {
  return new Promise((done, fail) => {
    const req = http.request(url, { method: 'POST', localAddress: o.localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Agent/1' } }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** True when this machine can listen on `host` (IPv6 loopback is not everywhere). */
function canListen(host: string): Promise<boolean> {
  return new Promise((done) => {
    const server = http.createServer();
    server.once('error', () => done(false));
    server.listen(0, host, () => server.close(() => done(true)));
  });
}
