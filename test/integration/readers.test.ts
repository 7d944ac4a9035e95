/**
 * Reader links through the local gateway into the real handlers: the links
 * of the listings (computable offline), the unsubscribe page (GET changes
 * nothing), RFC 8058 one-click (urlencoded and multipart), tampered and
 * rotated links, a deleted reader's link, the preference centre's saves, and
 * the export of a reader's data.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createForm } from '../../shared/clients/clients.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createList } from '../../shared/lists/lists.js';
import { READER_CHANGE_LIMITS, READER_PAGE_LIMITS } from '../../shared/ratelimit/policy.js';
import { LINK_SECRET_CACHE_SECONDS } from '../../shared/readers/check.js';
import { consentRecords } from '../../shared/readers/consent.js';
import { linkSecretsOf, rotateLinkSecret } from '../../shared/readers/link-secret.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type TestClient } from '../helpers/service.js';
import { rawEventObjects, recount, countSubscribers } from '../helpers/subscribers.js';
import { monotonicAhead } from '../helpers/clock.js';

const service = useService();

const listing = async (client: TestClient, listId: number) =>
  (await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { token: client.token })).body;

/** The links of one subscriber as the listing gives them. */
async function linksOf(client: TestClient, listId: number, email: string) {
  const item = (await listing(client, listId)).find((s) => s.email === email);
  if (!item) throw new Error(`${email} not listed`);
  return { unsubscribe: item.unsubscribe_url, preferences: item.preferences_url };
}

const oneClick = (url: string, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });

/** A client with a list named to need escaping and one member in it. */
async function withMember(email = 'reader@example.com') {
  const client = await newClient(service);
  const list = await createList(client.username, 'Daily <b>news</b> & "more"');
  await applySubscribers(client.username, list.id, [{ line: 1, email }]);
  const links = await linksOf(client, list.id, email);
  return { client, listId: list.id, email, links };
}

const unsubscribeEvents = async (clientId: string) => (await rawEventObjects(clientId, 'nl_unsubscribe')).flat();

describe('reader links in the subscriber listings', () => {
  it('every subscriber has absolute links under PUBLIC_BASE_URL that a sending system computes offline from the link secret', async () => {
    const client = await newClient(service);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'one@example.com' }, { line: 2, email: 'two@example.com', subscribed: false }]);
    const items = await listing(client, client.defaultListId);
    expect(items).toHaveLength(2);
    const secret = (await linkSecretsOf(client.username))!.current;
    for (const item of items) {
      // The construction of docs/api.md, "Reader links", computed here independently.
      const address = Buffer.from(item.email).toString('base64url');
      const unsubscribeToken = createHmac('sha256', secret).update(`unsubscribe\n${client.username}\n${client.defaultListId}\n${item.email}`).digest('base64url');
      const preferencesToken = createHmac('sha256', secret).update(`preferences\n${client.username}\n${item.email}`).digest('base64url');
      expect(item.unsubscribe_url).toBe(`${service.url}/v1/readers/unsubscribe/${client.username}/${client.defaultListId}/${address}/${unsubscribeToken}`);
      expect(item.preferences_url).toBe(`${service.url}/v1/readers/preferences/${client.username}/${address}/${preferencesToken}`);
    }
    // The deprecated listing carries the same links.
    const legacy = await request<ApiBody<'legacySubscribersList'>>(`${service.url}/v1/newsletters/subscribers`, { token: client.token });
    expect(legacy.body.map((s) => s.unsubscribe_url)).toEqual(items.map((s) => s.unsubscribe_url));
  });
});

describe('the unsubscribe link', () => {
  it('GET shows the list, the masked address and one button, escaped, and changes nothing; HEAD changes nothing', async () => {
    const { client, listId, email, links } = await withMember();
    const before = await getSubscriber(client.username, listId, email);
    for (let i = 0; i < 3; i++) {
      const page = await request(links.unsubscribe);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.text).toContain('Daily &lt;b&gt;news&lt;/b&gt; &amp; &quot;more&quot;');
      expect(page.text).not.toContain('<b>news</b>');
      expect(page.text).toContain('r***@example.com');
      expect(page.text).not.toContain(email);
      expect(page.text).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    }
    const head = await fetch(links.unsubscribe, { method: 'HEAD' });
    expect(head.status).toBeLessThan(500);
    expect(await getSubscriber(client.username, listId, email)).toEqual(before);
    expect(await countSubscribers(client.username, listId)).toEqual(await recount(client.username, listId));
    expect((await countSubscribers(client.username, listId)).subscribed).toBe(1);
  });

  it('one-click POST unsubscribes at once (cause READER, counts once, one event, a consent record) with a 2xx and no redirect; repeating changes nothing', async () => {
    const { client, listId, email, links } = await withMember();
    const reply = await oneClick(links.unsubscribe, { 'user-agent': 'MailProvider/1.0' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('location')).toBeNull();
    expect(reply.text).toContain('You are unsubscribed');
    const after = await getSubscriber(client.username, listId, email);
    expect(after).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(consentRecords(after!)).toHaveLength(2);
    expect(consentRecords(after!)[1]).toMatchObject({ subscribed: false, cause: 'READER', source: 'unsubscribe_link', ip: '127.0.0.1', user_agent: 'MailProvider/1.0' });
    const counts = { subscribed: 0, unsubscribed: 1, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 1 } };
    expect(await countSubscribers(client.username, listId)).toEqual(counts);

    const again = await oneClick(links.unsubscribe);
    expect(again.status).toBe(200);
    expect(again.text).toContain('Already unsubscribed');
    expect(await countSubscribers(client.username, listId)).toEqual(counts);
    expect(await recount(client.username, listId)).toEqual(counts);
    expect((await getSubscriber(client.username, listId, email))!.version).toBe(after!.version);
    const events = await unsubscribeEvents(client.username);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ email, cause: 'READER', email_list_id: listId });
  });

  it('accepts the one-click body as multipart/form-data, and refuses a POST without it or of another content type (400, nothing changed)', async () => {
    const { client, listId, email, links } = await withMember();
    const refused = await request(links.unsubscribe, { method: 'POST', raw: 'something=else', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(refused.status).toBe(400);
    expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(true);
    // Only the documented types (RFC 8058's two): text/plain, or no type at all, is not the form.
    for (const type of ['text/plain', undefined]) {
      const other = await fetch(links.unsubscribe, { method: 'POST', body: Buffer.from('List-Unsubscribe=One-Click'), headers: type ? { 'content-type': type } : {}, redirect: 'manual' });
      expect({ type, status: other.status }).toEqual({ type, status: 400 });
    }
    expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(true);
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const reply = await fetch(links.unsubscribe, { method: 'POST', body: form, redirect: 'manual' });
    expect(reply.status).toBe(200);
    expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(false);
  });

  it('a link for list A never changes list B or another address; a tampered link is a 404 and changes nothing', async () => {
    const { client, listId, email, links } = await withMember();
    const other = await createList(client.username, 'Other');
    await applySubscribers(client.username, other.id, [{ line: 1, email }, { line: 2, email: 'someone@example.com' }]);
    await applySubscribers(client.username, listId, [{ line: 2, email: 'someone@example.com' }]);
    const parts = links.unsubscribe.split('/');
    const [token, address, list] = [parts.length - 1, parts.length - 2, parts.length - 3];
    const variant = (index: number, value: string) => parts.map((p, i) => (i === index ? value : p)).join('/');
    const flipped = parts[token].slice(0, -1) + (parts[token].endsWith('A') ? 'B' : 'A');
    const tampered = [
      variant(list, String(other.id)),
      variant(address, Buffer.from('someone@example.com').toString('base64url')),
      variant(token, flipped),
      variant(token, 'short'),
      variant(address, '%%%'),
      links.unsubscribe.replace(`/${client.username}/`, '/another-client/'),
    ];
    for (const url of tampered) {
      expect((await request(url)).status, url).toBe(404);
      expect((await oneClick(url)).status, url).toBe(404);
    }
    for (const [l, e] of [[listId, email], [other.id, email], [listId, 'someone@example.com'], [other.id, 'someone@example.com']] as const) {
      expect((await getSubscriber(client.username, l, e))!.subscribed).toBe(true);
    }
    expect(await unsubscribeEvents(client.username)).toHaveLength(0);
    // The genuine link changes its own list only.
    expect((await oneClick(links.unsubscribe)).status).toBe(200);
    expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(false);
    expect((await getSubscriber(client.username, other.id, email))!.subscribed).toBe(true);
  });

  it("a deleted reader's link answers a neutral page and never brings the reader back", async () => {
    const { client, listId, email, links } = await withMember();
    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    for (const reply of [await request(links.unsubscribe), await oneClick(links.unsubscribe), await request(links.preferences)]) {
      expect(reply.status).toBe(200);
      expect(reply.text).toMatch(/not subscribed/);
    }
    const saved = await request(links.preferences, { method: 'POST', raw: 'action=save&list=' + String(listId), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(saved.status).toBe(200);
    expect(await getSubscriber(client.username, listId, email)).toBeUndefined();
    expect(await recount(client.username, listId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('rotating the link secret: new links work at once, old ones through the grace period; ending them takes effect once the kept secrets expire', async () => {
    const { client, listId, email, links } = await withMember();
    expect((await request(links.unsubscribe)).status).toBe(200);
    await rotateLinkSecret(client.username, 30);
    const fresh = await linksOf(client, listId, email);
    expect(fresh.unsubscribe).not.toBe(links.unsubscribe);
    // The container kept the old secrets: a link of the new one is checked once more against the client item.
    expect((await request(fresh.unsubscribe)).status).toBe(200);
    expect((await request(links.unsubscribe)).status).toBe(200);
    await rotateLinkSecret(client.username, 0);
    // Checked against the kept secrets, with no database read: the old links work on until those expire.
    expect((await request(links.unsubscribe)).status).toBe(200);
    await afterKeptSecretsExpire(async () => {
      expect((await request(links.unsubscribe)).status).toBe(404);
      expect((await oneClick(fresh.unsubscribe)).status).toBe(404);
      expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(true);
      const newest = await linksOf(client, listId, email);
      expect((await oneClick(newest.unsubscribe)).status).toBe(200);
    });
  });

  it(`is rate-limited per address (${READER_PAGE_LIMITS.perIpPerMinute} a minute) and per link (${READER_PAGE_LIMITS.perLinkPerMinute}), then 429 with Retry-After`, async () => {
    const client = await newClient(service);
    const list = await createList(client.username, 'Limits');
    const emails = ['l1@example.com', 'l2@example.com', 'l3@example.com'];
    await applySubscribers(client.username, list.id, emails.map((email, i) => ({ line: i + 1, email })));
    const [one, two, three] = await Promise.all(emails.map((email) => linksOf(client, list.id, email)));
    await freshWindow(45_000);
    const { perIpPerMinute, perLinkPerMinute } = READER_PAGE_LIMITS;
    const gets = async (url: string, n: number) => Promise.all(Array.from({ length: n }, async () => (await request(url)).status));
    expect(new Set(await gets(one.unsubscribe, perLinkPerMinute))).toEqual(new Set([200]));
    const perLink = await request<ErrorBody>(one.unsubscribe);
    expect([perLink.status, perLink.body.cause]).toEqual([429, expect.stringContaining('for this link')]);
    expect(Number(perLink.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same address, other links: its own budget ends first.
    const rest = perIpPerMinute - perLinkPerMinute - 1;
    expect(new Set([...(await gets(two.unsubscribe, perLinkPerMinute)), ...(await gets(three.preferences, rest - perLinkPerMinute))])).toEqual(new Set([200]));
    const perIp = await request<ErrorBody>(three.unsubscribe);
    expect([perIp.status, perIp.body.cause]).toEqual([429, expect.stringContaining('from this IP address')]);
    // Changes have a budget of their own: scanners that used up the pages' one do not turn an unsubscribe into a 429.
    expect((await oneClick(one.unsubscribe)).status).toBe(200);
  }, 90_000);

  it(`one link replayed from many addresses limits only itself: another reader's link still answers, its page and its one-click POST`, async () => {
    const client = await newClient(service);
    const list = await createList(client.username, 'Replayed');
    await applySubscribers(client.username, list.id, [{ line: 1, email: 'mine@example.com' }, { line: 2, email: 'other@example.com' }, { line: 3, email: 'third@example.com' }]);
    const [mine, other, third] = await Promise.all(['mine@example.com', 'other@example.com', 'third@example.com'].map((email) => linksOf(client, list.id, email)));
    await freshWindow(30_000);
    // 24 addresses, each its whole budget on one link: more than a publisher's pages had in all before (1,200 a minute).
    const pages = await replay(mine.unsubscribe, 'GET', 24, READER_PAGE_LIMITS.perIpPerMinute, 1);
    expect(await from('127.0.9.1', other.unsubscribe, 'GET')).toBe(200);
    expect(await from('127.0.9.1', third.preferences, 'GET')).toBe(200);
    expect(pages.get(200)).toBeLessThanOrEqual(READER_PAGE_LIMITS.perLinkPerMinute * pages.windows);
    await freshWindow(30_000);
    // The one-click POST: 11 addresses × 600, more than its publisher-wide budget was (6,000 a minute).
    const posts = await replay(mine.unsubscribe, 'POST', 11, READER_CHANGE_LIMITS.perIpPerMinute, 2);
    expect(await from('127.0.9.2', other.unsubscribe, 'POST')).toBe(200);
    expect(posts.get(200)).toBeLessThanOrEqual(READER_CHANGE_LIMITS.perLinkPerMinute * posts.windows);
    expect((await getSubscriber(client.username, list.id, 'other@example.com'))!.subscribed).toBe(false);
  }, 240_000);
});

/** Waits for the next rate-limit window when less than `needMs` of this one is left. */
async function freshWindow(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((done) => setTimeout(done, left + 100));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One reader link request from a loopback address of its own (the gateway's source address); answers the status. */
function from(localAddress: string, url: string, method: 'GET' | 'POST'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, localAddress, headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined);
  });
}

/** `perAddress` requests to `url` from each of `addresses` addresses 127.0.<subnet>.<n>, 16 at once: the count of each status, and the rate-limit windows they spanned. */
async function replay(url: string, method: 'GET' | 'POST', addresses: number, perAddress: number, subnet: number): Promise<Map<number, number> & { windows: number }> {
  const jobs = Array.from({ length: addresses * perAddress }, (_, i) => `127.0.${subnet}.${(i % addresses) + 1}`);
  const first = Math.floor(Date.now() / 60_000);
  const counts = Object.assign(new Map<number, number>(), { windows: 1 });
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < jobs.length) {
        const status = await from(jobs[next++], url, method);
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
    }),
  );
  counts.windows = Math.floor(Date.now() / 60_000) - first + 1;
  return counts;
}

describe('admin link-secret', () => {
  const admin = async (...args: string[]) => (await adminCli(...args)) as { link_secret: string; previous_link_secret: string | null; previous_valid_until: string | null };

  it('shows the secret the links are made with, and rotates it with the grace period given', { timeout: 60_000 }, async () => {
    const { client, listId, email, links } = await withMember();
    const shown = await admin('link-secret', client.username);
    expect(shown).toEqual({ username: client.username, link_secret: (await linkSecretsOf(client.username))!.current, previous_link_secret: null, previous_valid_until: null });
    const rotated = await admin('link-secret', client.username, '--rotate', '--grace-days', '7');
    expect(rotated.previous_link_secret).toBe(shown.link_secret);
    expect(Date.parse(rotated.previous_valid_until!) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect((await request(links.unsubscribe)).status).toBe(200);
    await admin('link-secret', client.username, '--rotate', '--grace-days', '0');
    expect((await request((await linksOf(client, listId, email)).unsubscribe)).status).toBe(200);
    await afterKeptSecretsExpire(async () => expect((await request(links.unsubscribe)).status).toBe(404));
  });
});

/** Runs `check` with the clocks LINK_SECRET_CACHE_SECONDS ahead: every container's kept link secrets have expired (they age on the monotonic clock). */
async function afterKeptSecretsExpire(check: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  const monotonic = monotonicAhead((LINK_SECRET_CACHE_SECONDS + 1) * 1000);
  try {
    vi.setSystemTime(Date.now() + (LINK_SECRET_CACHE_SECONDS + 1) * 1000);
    await check();
  } finally {
    monotonic.mockRestore();
    vi.useRealTimers();
  }
}

/** Runs the admin CLI against the test stack; its printed JSON. */
async function adminCli(...args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(resolve(import.meta.dirname, '../../node_modules/.bin/tsx'), ['infra/admin.ts', ...args], { cwd: resolve(import.meta.dirname, '../..'), env: process.env });
  return JSON.parse(stdout) as unknown;
}

describe('admin backfill-global-forms', () => {
  it("offers in the preference centre the lists of global forms made before the client kept them, once backfilled", { timeout: 60_000 }, async () => {
    const client = await newClient(service);
    const email = 'early@example.com';
    const offers = await createList(client.username, 'Offers');
    const local = await createList(client.username, 'Local form only');
    await createForm(client.username, { listIds: [offers.id], global: true });
    await createForm(client.username, { listIds: [local.id], global: false });
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email }]);
    // A client item without the attribute the preference centre reads, though its global form exists.
    await ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.client(client.username), UpdateExpression: 'REMOVE globalFormLists' }));
    const { preferences } = await linksOf(client, client.defaultListId, email);
    expect((await request(preferences)).text).not.toContain(`name="list" value="${offers.id}"`);

    expect(await adminCli('backfill-global-forms', client.username)).toEqual({ username: client.username, global_form_lists: [offers.id] });
    const page = await request(preferences);
    expect(page.text).toContain(`name="list" value="${offers.id}">`);
    expect(page.text).not.toContain('Local form only');
    // Again: nothing changes.
    expect(await adminCli('backfill-global-forms', client.username)).toEqual({ username: client.username, global_form_lists: [offers.id] });
  });
});

describe('the preference centre', () => {
  it("shows the reader's lists ticked as they stand and the global form's lists; saving unsubscribes, resubscribes and subscribes; one button leaves all", async () => {
    const client = await newClient(service);
    const email = 'prefs@example.com';
    const weekly = await createList(client.username, 'Weekly');
    const offers = await createList(client.username, 'Offers');
    const unrelated = await createList(client.username, 'Staff only');
    await createForm(client.username, { listIds: [offers.id], global: true });
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email }]);
    await applySubscribers(client.username, weekly.id, [{ line: 1, email, subscribed: false }]);
    const { preferences } = await linksOf(client, client.defaultListId, email);

    const page = await request(preferences);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`name="list" value="${client.defaultListId}" checked`);
    expect(page.text).toContain(`name="list" value="${weekly.id}">`);
    expect(page.text).toContain(`name="list" value="${offers.id}">`);
    expect(page.text).not.toContain('Staff only');

    const post = (body: string) => request(preferences, { method: 'POST', raw: body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Browser/2' } });
    // Untick the default list, tick Weekly (left before) and Offers (never in), and try a list the page does not offer.
    const saved = await post(`action=save&list=${weekly.id}&list=${offers.id}&list=${unrelated.id}`);
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Your preferences are saved');
    expect(await getSubscriber(client.username, client.defaultListId, email)).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(await getSubscriber(client.username, weekly.id, email)).toMatchObject({ subscribed: true });
    expect(await getSubscriber(client.username, offers.id, email)).toMatchObject({ subscribed: true });
    expect(await getSubscriber(client.username, unrelated.id, email)).toBeUndefined();
    expect(consentRecords((await getSubscriber(client.username, weekly.id, email))!).at(-1)).toMatchObject({ subscribed: true, source: 'preferences', user_agent: 'Browser/2' });

    const all = await post('action=unsubscribe_all');
    expect(all.text).toContain('You are unsubscribed from every newsletter below');
    for (const listId of [client.defaultListId, weekly.id, offers.id]) {
      expect((await getSubscriber(client.username, listId, email))!.subscribed).toBe(false);
      expect(await countSubscribers(client.username, listId)).toEqual(await recount(client.username, listId));
    }
    // One nl_unsubscribe per change of status to unsubscribed: default (save), weekly and offers (unsubscribe_all).
    expect((await unsubscribeEvents(client.username)).map((e) => e.email_list_id).sort()).toEqual([client.defaultListId, weekly.id, offers.id].sort());
  });
});

describe('GET /v1/users/export', () => {
  it("answers the reader's memberships with consent records for the caller's client only; after users/delete, 404", async () => {
    const { client, listId, email, links } = await withMember('export@example.com');
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email, data: { data_city: 'Lyon' } }]);
    await oneClick(links.unsubscribe, { 'user-agent': 'UA' });
    const url = `${service.url}/v1/users/export?email=${encodeURIComponent('Export@Example.com')}`;
    const reply = await request<ApiBody<'usersExport'>>(url, { token: client.token });
    expect(reply.status).toBe(200);
    expect(reply.body.email).toBe(email);
    expect(reply.body.memberships.map((m) => m.list_id)).toEqual([client.defaultListId, listId]);
    const [first, second] = reply.body.memberships;
    expect(first).toMatchObject({ subscribed: true, unsubscribed_cause: null, data: { data_city: 'Lyon' } });
    expect(first.consent).toEqual([expect.objectContaining({ subscribed: true, cause: null, source: 'api', ip: null, user_agent: null })]);
    expect(second).toMatchObject({ subscribed: false, unsubscribed_cause: 'READER' });
    expect(second.consent.map((c) => [c.subscribed, c.source, c.user_agent])).toEqual([[true, 'api', null], [false, 'unsubscribe_link', 'UA']]);
    expect(reply.body.readers).toEqual([{ guid: first.guid, history: null, preferences: null }]);
    expect(reply.body.pending_optins).toEqual([]);

    const stranger = await newClient(service);
    expect((await request<ErrorBody>(url, { token: stranger.token })).status).toBe(404);
    expect((await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] })).status).toBe(200);
    expect((await request<ErrorBody>(url, { token: client.token })).status).toBe(404);
  });

  it('refuses a bad address (400) and a missing token (401)', async () => {
    const client = await newClient(service);
    expect((await request<ErrorBody>(`${service.url}/v1/users/export?email=nope`, { token: client.token })).status).toBe(400);
    expect((await request<ErrorBody>(`${service.url}/v1/users/export?email=a@b.co`)).status).toBe(401);
  });
});
