import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { localMounts } from '../../infra/local/server.js';
import { sha256 } from '../../shared/auth/secrets.js';
import { createClient, createForm } from '../../shared/clients/clients.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createList } from '../../shared/lists/lists.js';
import { confirm, messages } from '../../shared/optin/service.js';
import { s3 } from '../../shared/s3.js';
import { getSubscriber } from '../../shared/subscribers/service.js';
import { confirmationLink, DAY_MS, mailsTo, newEmail, runReminderJob } from '../helpers/optin.js';
import { newClient, request, useService, type TestClient, type ApiBody } from '../helpers/service.js';
import { streamDrained } from '../helpers/subscribers.js';

const service = useService({ mounts: localMounts });

/** A fresh client with a second list, a list form over list 1 and a global form over lists 1 and 2. */
async function setup(options: { confirmRedirectUrl?: string } = {}) {
  const client = await newClient(service);
  const second = await createList(client.username, 'Weekly');
  const listForm = await createForm(client.username, { listIds: [client.defaultListId], global: false, ...options });
  const globalForm = await createForm(client.username, { listIds: [client.defaultListId, second.id], global: true, ...options });
  return { client, lists: [client.defaultListId, second.id], listForm, globalForm };
}

const subscribe = (client: TestClient, body: unknown) => request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body });
const postForm = (client: TestClient, form: string) =>
  request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', raw: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

async function eventEmails(clientId: string, event: string): Promise<string> {
  await streamDrained();
  const out = await s3.send(new ListObjectsV2Command({ Bucket: process.env.EVENTS_BUCKET, Prefix: `raw/${clientId}/${event}/` }));
  const bodies = await Promise.all(
    (out.Contents ?? []).map(async (o) => {
      const { GetObjectCommand } = await import('@aws-sdk/client-s3');
      return (await s3.send(new GetObjectCommand({ Bucket: process.env.EVENTS_BUCKET, Key: o.Key }))).Body!.transformToString();
    }),
  );
  return bodies.join('');
}

describe('POST /v1/subscribe/{tracking_key}: the whole double opt-in flow', () => {
  it('form post → email in the outbox → link followed → subscribed and counted → no reminder afterwards', async () => {
    const { client, lists, globalForm } = await setup();
    const email = newEmail();

    const reply = await subscribe(client, { email, form_key: globalForm, email_lists: [lists[1]], data_first_name: 'Zoé <b>', open_tracking_consent: true });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: messages.pending });
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(await getSubscriber(client.username, lists[1], email)).toBeUndefined();

    const [mail, ...more] = await mailsTo(email);
    expect(more).toHaveLength(0);
    expect(mail.from?.address).toBe('newsletter@localhost');
    expect(mail.subject).toBe('Please confirm your subscription');
    expect(mail.text).toMatch(/^Hello,$/m);
    expect(mail.text).not.toContain('Zoé');
    expect(mail.html).not.toContain('Zoé');
    const link = confirmationLink(mail);
    expect(link.startsWith(`${service.url}/v1/optin/confirm/`)).toBe(true);

    const count = async (listId: number) => (await request(`${service.url}/v1/newsletters/lists/${listId}/subscribers/count`, { token: client.token })).body;
    expect(await count(lists[1])).toMatchObject({ subscribed: 0, unsubscribed: 0 });

    const page = await request(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Subscription confirmed');
    const subscriber = await getSubscriber(client.username, lists[1], email);
    expect(subscriber?.subscribed).toBe(true);
    expect(subscriber?.openTrackingConsent).toBe(true);
    expect(await getSubscriber(client.username, lists[0], email)).toBeUndefined();
    expect(await eventEmails(client.username, 'nl_subscribe')).toContain(email);

    expect(await count(lists[1])).toMatchObject({ subscribed: 1, unsubscribed: 0 });
    expect(await count(lists[0])).toMatchObject({ subscribed: 0, unsubscribed: 0 });

    const again = await request(link);
    expect(again.status).toBe(200);
    expect(again.text).toContain('Already confirmed');
    expect(await count(lists[1])).toMatchObject({ subscribed: 1, unsubscribed: 0 });

    await runReminderJob(new Date(Date.now() + 4 * DAY_MS));
    expect(await mailsTo(email)).toHaveLength(1);
  });

  it('forgets a pending opt-in when the user is deleted: no reminder, and the old link subscribes nobody', async () => {
    const { client, listForm } = await setup();
    const email = newEmail('deleted');
    expect((await subscribe(client, { email, form_key: listForm })).status).toBe(200);
    const link = confirmationLink((await mailsTo(email))[0]);
    const deleted = await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] });
    expect(deleted.status).toBe(200);
    const pending = await ddb.send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.optinPendingPartition(client.username, email) } }));
    expect(pending.Items).toEqual([]);
    await request(link);
    expect(await getSubscriber(client.username, client.defaultListId, email)).toBeUndefined();
    await runReminderJob(new Date(Date.now() + 4 * DAY_MS));
    expect(await mailsTo(email)).toHaveLength(1);
  });

  it('takes a plain HTML form body: repeated email_lists fields and string booleans', async () => {
    const { client, lists, globalForm } = await setup();
    const email = newEmail();
    const form = new URLSearchParams([['email', email], ['form_key', globalForm], ['email_lists', String(lists[0])], ['email_lists', String(lists[1])], ['open_tracking_consent', 'FALSE'], ['data_city', 'Lyon & co']]);
    const reply = await postForm(client, form.toString());
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: messages.pending });
    const [mail] = await mailsTo(email);
    expect((await request(confirmationLink(mail))).status).toBe(200);
    for (const listId of lists) {
      const subscriber = await getSubscriber(client.username, listId, email);
      expect(subscriber?.subscribed, `list ${listId}`).toBe(true);
      expect(subscriber?.openTrackingConsent).toBe(false);
    }
  });

  it("subscribes a list form to its own lists, whatever email_lists says, and redirects to the form's page", async () => {
    const { client, lists, listForm } = await setup({ confirmRedirectUrl: 'https://publisher.example/thanks?from=optin' });
    const email = newEmail();
    expect((await subscribe(client, { email, form_key: listForm, email_lists: [lists[1]] })).status).toBe(200);
    const link = confirmationLink((await mailsTo(email))[0]);
    const first = await request(link);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('https://publisher.example/thanks?from=optin');
    expect((await request(link)).headers.get('location')).toBe('https://publisher.example/thanks?from=optin');
    expect((await getSubscriber(client.username, lists[0], email))?.subscribed).toBe(true);
    expect(await getSubscriber(client.username, lists[1], email)).toBeUndefined();
  });

  it('keeps one pending registration while pending and resends only after the resend period', async () => {
    const { client, listForm, lists } = await setup();
    const email = newEmail();
    const body = { email, form_key: listForm };
    const replies = await Promise.all([subscribe(client, body), subscribe(client, body), subscribe(client, body)]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await mailsTo(email)).toHaveLength(1);
    const pending = await ddb.send(
      new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.optinPending(client.username, email, listForm).pk } }),
    );
    // One pending opt-in, and the entry that lists its one link for users/delete.
    expect(pending.Items!.map((i) => String(i.type)).sort()).toEqual(['optin', 'optinTokenRef']);
    // Only the hash of the link's token is stored.
    const token = confirmationLink((await mailsTo(email))[0]).split('/').pop()!;
    const stored = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.optinToken(sha256(token)) }));
    expect(stored.Item?.pendingId).toBe(pending.Items![0].pendingId);
    expect(JSON.stringify([stored.Item, pending.Items])).not.toContain(token);

    process.env.OPTIN_RESEND_MINUTES = '0';
    try {
      expect((await subscribe(client, body)).status).toBe(200);
    } finally {
      delete process.env.OPTIN_RESEND_MINUTES;
    }
    const mails = await mailsTo(email);
    expect(mails).toHaveLength(2);
    // Either link confirms the one pending registration; the other then finds it done.
    const [first, second] = mails.map(confirmationLink);
    expect(first).not.toBe(second);
    expect((await request(second)).text).toContain('Subscription confirmed');
    expect((await request(first)).text).toContain('Already confirmed');
    expect((await getSubscriber(client.username, lists[0], email))?.subscribed).toBe(true);
  });

  it("a confirmation link confirms exactly its own submission: a stranger's later submission of the same address changes nothing it confirms", async () => {
    const { client, globalForm, lists } = await setup();
    const email = newEmail();
    expect((await subscribe(client, { email, form_key: globalForm, email_lists: [lists[0]], data_first_name: 'Reader' })).status).toBe(200);
    // Within the resend period: the same neutral answer, no email, and nothing is changed.
    expect((await subscribe(client, { email, form_key: globalForm, email_lists: [lists[1]], data_first_name: 'Stranger', data_evil: 'x' })).status).toBe(200);
    expect(await mailsTo(email)).toHaveLength(1);
    // After it: the stranger's submission mails a link of its own; the reader's first link still confirms the reader's submission.
    process.env.OPTIN_RESEND_MINUTES = '0';
    try {
      expect((await subscribe(client, { email, form_key: globalForm, email_lists: [lists[1]], data_first_name: 'Stranger', data_evil: 'x' })).status).toBe(200);
    } finally {
      delete process.env.OPTIN_RESEND_MINUTES;
    }
    const [readers, strangers] = (await mailsTo(email)).map(confirmationLink);
    expect(strangers).toBeDefined();
    expect((await request(readers)).text).toContain('Subscription confirmed');
    const onFirst = await getSubscriber(client.username, lists[0], email);
    expect(onFirst).toMatchObject({ subscribed: true, data: { data_first_name: 'Reader' } });
    expect(JSON.stringify(onFirst)).not.toMatch(/Stranger|data_evil/);
    expect(await getSubscriber(client.username, lists[1], email)).toBeUndefined();
    // The later link belongs to the same registration, now confirmed: it changes nothing.
    expect((await request(strangers)).text).toContain('Already confirmed');
    expect(await getSubscriber(client.username, lists[1], email)).toBeUndefined();
  });

  it('answers an already subscribed address exactly as a new one, without email or change', async () => {
    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm, data_plan: 'free' });
    await request(confirmationLink((await mailsTo(email))[0]));
    const before = await getSubscriber(client.username, lists[0], email);

    const known = await subscribe(client, { email, form_key: listForm, data_plan: 'paid' });
    const unknown = await subscribe(client, { email: newEmail(), form_key: listForm });
    expect(known.status).toBe(unknown.status);
    expect(known.text).toBe(unknown.text);
    expect(await mailsTo(email)).toHaveLength(1);
    expect(await getSubscriber(client.username, lists[0], email)).toEqual(before);
  });

  it('confirms once when the link is followed twice at the same time', async () => {
    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm });
    const link = confirmationLink((await mailsTo(email))[0]);
    const pages = await Promise.all([request(link), request(link), request(link)]);
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    expect((await getSubscriber(client.username, lists[0], email))?.subscribed).toBe(true);
    const counted = await request(`${service.url}/v1/newsletters/lists/${lists[0]}/subscribers/count`, { token: client.token });
    expect(counted.body).toMatchObject({ subscribed: 1 });
    const events = (await eventEmails(client.username, 'nl_subscribe')).split('\n').filter((l) => l.includes(email));
    expect(events).toHaveLength(1);
  });

  it('shows a 404 page for an unknown link and for an expired one', async () => {
    const unknown = await request(`${service.url}/v1/optin/confirm/${'A'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Link not valid');

    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm });
    const token = confirmationLink((await mailsTo(email))[0]).split('/').pop()!;
    expect(await confirm(token, new Date(Date.now() + 31 * DAY_MS))).toEqual({ outcome: 'invalid' });
    expect(await getSubscriber(client.username, lists[0], email)).toBeUndefined();
  });
});

describe('update: true', () => {
  it('updates the data of a known subscriber without any email', async () => {
    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm, data_plan: 'free' });
    await request(confirmationLink((await mailsTo(email))[0]));

    const reply = await postForm(client, new URLSearchParams({ email: email.toUpperCase(), form_key: listForm, update: 'true', data_plan: 'paid' }).toString());
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: messages.updated });
    expect((reply.body as ApiBody<'subscribePost'>).success).not.toBe(messages.pending);
    expect((await getSubscriber(client.username, lists[0], email))?.data).toMatchObject({ data_plan: 'paid' });
    expect(await mailsTo(email)).toHaveLength(1);
  });

  it('refuses an unknown address with the cause of the spec', async () => {
    const { client, listForm } = await setup();
    const email = newEmail();
    const reply = await subscribe(client, { email, form_key: listForm, update: true });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: `Could not update. Unknown subscriber ${email}.` });
    expect(await mailsTo(email)).toHaveLength(0);
  });
});

describe('invalid requests', () => {
  it('answers 400 with a precise cause', async () => {
    const { client, lists, globalForm, listForm } = await setup();
    const other = await createClient(`t-other-${Date.now().toString(36)}`);
    const otherForm = await createForm(other.client.id, { listIds: [other.client.defaultListId], global: false });
    const email = newEmail();
    const cases: Array<[string, unknown, string]> = [
      ['unknown tracking key', 'x', 'path.tracking_key: unknown tracking key'],
      ['unknown form key', { email, form_key: 'nope' }, 'body.form_key: unknown form key for this tracking key'],
      ['form key of another client', { email, form_key: otherForm }, 'body.form_key: unknown form key for this tracking key'],
      ['missing email', { form_key: listForm }, 'body.email: is required'],
      ['invalid email', { email: 'no-at-sign', form_key: listForm }, 'body.email: must be a valid email: it has no @'],
      ['missing form key', { email }, 'body.form_key: is required'],
      ['global form without email_lists', { email, form_key: globalForm }, `body.email_lists: is required for this form (a global opt-in form); choose among its lists ${lists.join(', ')}`],
      ['email_lists outside the form', { email, form_key: globalForm, email_lists: [lists[1], 99] }, `body.email_lists: list(s) 99 not offered by this form; choose among ${lists.join(', ')}`],
      ['email_lists not ids', { email, form_key: globalForm, email_lists: ['weekly'] }, 'body.email_lists: must be list ids (integers from 1 to 9999999999), got "weekly"'],
      ['update not a boolean', { email, form_key: listForm, update: 'sometimes' }, 'body.update: must be true or false'],
    ];
    for (const [name, body, cause] of cases) {
      const reply = name === 'unknown tracking key'
        ? await request(`${service.url}/v1/subscribe/unknown-key`, { method: 'POST', body: { email, form_key: listForm } })
        : await subscribe(client, body);
      expect(reply.status, name).toBe(400);
      expect(reply.body, name).toEqual({ status: 400, cause });
    }
    expect(await mailsTo(email)).toHaveLength(0);
  });

  it('answers 415 to a body that is neither JSON nor a form', async () => {
    const { client } = await setup();
    const reply = await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', raw: 'email=x', headers: { 'content-type': 'text/plain' } });
    expect(reply.status).toBe(415);
  });
});

describe('the reminder job', () => {
  it('reminds a pending registration once, after the configured days, with a working link', async () => {
    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm });

    await runReminderJob(new Date(Date.now() + 2 * DAY_MS));
    expect(await mailsTo(email)).toHaveLength(1);
    await runReminderJob(new Date(Date.now() + 3 * DAY_MS + 60_000));
    await runReminderJob(new Date(Date.now() + 5 * DAY_MS));
    const mails = await mailsTo(email);
    expect(mails.map((m) => m.subject)).toEqual(['Please confirm your subscription', 'Reminder: please confirm your subscription']);

    expect((await request(confirmationLink(mails[1]))).text).toContain('Subscription confirmed');
    expect((await getSubscriber(client.username, lists[0], email))?.subscribed).toBe(true);
  });

  it('sends no reminder to an address subscribed meanwhile through the list API', async () => {
    const { client, lists, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm });
    const api = await request(`${service.url}/v1/newsletters/lists/${lists[0]}/subscribers`, { method: 'POST', token: client.token, body: { email, subscribed: true } });
    expect(api.status).toBe(200);
    await runReminderJob(new Date(Date.now() + 4 * DAY_MS));
    expect(await mailsTo(email)).toHaveLength(1);
  });

  it('never reminds twice when runs overlap', async () => {
    const { client, listForm } = await setup();
    const email = newEmail();
    await subscribe(client, { email, form_key: listForm });
    const at = new Date(Date.now() + 4 * DAY_MS);
    await Promise.all([runReminderJob(at), runReminderJob(at), runReminderJob(at)]);
    expect((await mailsTo(email)).map((m) => m.subject)).toEqual(['Please confirm your subscription', 'Reminder: please confirm your subscription']);
  });
});

describe('the dev outbox page (local server only)', () => {
  it('lists the messages and shows one, with reader data escaped', async () => {
    const { client, listForm } = await setup();
    const email = newEmail('outbox');
    await subscribe(client, { email, form_key: listForm, data_first_name: '<img src=x onerror=alert(1)>' });
    const index = await request(`${service.url}/dev/outbox/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('access-control-allow-origin'), 'no other site may read the outbox').toBeNull();
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    const row = new RegExp(`<td>${email.replace(/[.]/g, '\\.')}</td><td><a href="([^"]+\\.html)">Please confirm your subscription</a>`).exec(index.text);
    expect(row, 'a row for the message').not.toBeNull();
    const message = await request(`${service.url}/dev/outbox/${row![1]}`);
    expect(message.status).toBe(200);
    expect(message.text).toContain('/v1/optin/confirm/');
    expect(message.text).not.toContain('<img src=x');
    expect((await request(`${service.url}/dev/outbox/${row![1].replace(/\.html$/, '.eml')}`)).text).toMatch(/^From: newsletter@localhost/m);
    expect((await request(`${service.url}/dev/outbox/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
  });
});
