/**
 * Small writes beside a bulk write of the same list (a batch POST, or an import's worker): single POSTs, opt-in
 * confirmations, unsubscribes and users/delete each answer 200 and counts stay exact. Their latency is measured by
 * bench:subscribers and bench:imports (small writes' p99), not here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForm, setClientSetting } from '../../shared/clients/clients.js';
import { confirmationLink, mailsTo } from '../helpers/optin.js';
import { newClient, request, useService, type ApiBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';
import { csvRoute, runWorker, startFileServer, type FileServer } from './imports-helpers.js';

const service = useService();
let files: FileServer;
beforeAll(async () => {
  files = await startFileServer();
});
afterAll(() => files.close());
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A client with rate limits out of the way, an opt-in form on its default list and 40 members (member0..39@example.com) the small writes unsubscribe or delete. */
async function busyClient() {
  const client = await newClient(service);
  await setClientSetting(client.username, 'rateLimits', { perIpPerMinute: 100_000, perKeyPerMinute: 100_000 });
  const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
  const url = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
  const post = (body: unknown) => request(url, { method: 'POST', token: client.token, body });
  expect((await post(Array.from({ length: 40 }, (_, i) => ({ email: `member${i}@example.com` })))).status).toBe(200);
  return { client, formKey, url, post };
}

describe('small writes during a bulk write of the same list', () => {
  it('single POSTs, unsubscribes and users/delete answer 200 while a 6,000-line POST runs; counts stay exact', async () => {
    const client = await newClient(service);
    const url = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
    const post = (body: unknown) => request(url, { method: 'POST', token: client.token, body });
    // Members the small writes will unsubscribe or delete.
    expect((await post(Array.from({ length: 40 }, (_, i) => ({ email: `member${i}@example.com` })))).status).toBe(200);
    const bulk = post(Array.from({ length: 6000 }, (_, i) => ({ email: `bulk${i}@example.com`, data_n: i })));
    const replies: Array<{ what: string; status: number }> = [];
    const record = async (what: string, send: () => Promise<{ status: number }>) => {
      const reply = await send();
      replies.push({ what, status: reply.status });
    };
    const small: Array<Promise<void>> = [];
    for (let i = 0; i < 30; i++) {
      await sleep(120);
      if (i % 3 === 0) small.push(record('subscribe', () => post({ email: `single${i}@example.com` })));
      if (i % 3 === 1) small.push(record('unsubscribe', () => post({ email: `member${i}@example.com`, subscribed: false })));
      if (i % 3 === 2) small.push(record('users/delete', () => request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: `member${i}@example.com` }] })));
    }
    await Promise.all(small);
    expect((await bulk).status).toBe(200);
    expect(replies.filter((t) => t.status !== 200)).toEqual([]);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth).toMatchObject({ subscribed: 40 - 20 + 10 + 6000, unsubscribed: 10 });
    expect((await request(`${url}/count`, { token: client.token })).body).toEqual(truth);
  }, 90_000);

  it('opt-in confirmations and the form’s updates answer 200 while a 6,000-line POST runs; counts stay exact', async () => {
    const { client, formKey, url, post } = await busyClient();
    const bulk = post(Array.from({ length: 6000 }, (_, i) => ({ email: `bulk${i}@example.com`, data_n: i })));
    const replies: Array<{ what: string; status: number }> = [];
    const record = async (what: string, send: () => Promise<{ status: number; text?: string }>, expectText?: string) => {
      const reply = await send();
      replies.push({ what, status: expectText && !reply.text?.includes(expectText) ? 0 : reply.status });
    };
    const form = (fields: Record<string, string>) =>
      request(`${service.url}/v1/subscribe/${client.trackingKey}`, {
        method: 'POST',
        raw: new URLSearchParams({ form_key: formKey, ...fields }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    /** A form submission, then its mailed link followed: the link's GET is the write checked. */
    const confirm = async (email: string) => {
      const submitted = await form({ email });
      expect(submitted.status, submitted.text).toBe(200);
      const [mail] = await mailsTo(email);
      await record('confirm', () => request(confirmationLink(mail)), 'Subscription confirmed');
    };
    const small: Array<Promise<void>> = [];
    for (let i = 0; i < 20; i++) {
      await sleep(120);
      if (i % 2 === 0) small.push(confirm(`optin-post${i}@example.com`));
      else small.push(record('form update', () => form({ email: `member${i}@example.com`, update: 'true', data_plan: `plan${i}` })));
    }
    await Promise.all(small);
    expect((await bulk).status).toBe(200);
    expect(replies).toHaveLength(20);
    expect(replies.filter((t) => t.status !== 200)).toEqual([]);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth).toMatchObject({ subscribed: 40 + 10 + 6000, unsubscribed: 0 });
    expect((await request(`${url}/count`, { token: client.token })).body).toEqual(truth);
  }, 90_000);

  it('single POSTs, opt-in confirmations, unsubscribes and users/delete answer 200 while a 5,000-line import runs; counts stay exact', async () => {
    const { client, formKey, url, post } = await busyClient();
    const lines = 5_000;
    let csv = 'email;data_n\n';
    for (let i = 0; i < lines; i++) csv += `imported${i}@example.com;${i}\n`;
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    files.routes.set('/small-writes.csv', csvRoute(csv));
    const created = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, { method: 'POST', token: client.token, body: { email_list_id: client.defaultListId, url: `${files.url}/small-writes.csv` } });
    delete process.env.IMPORT_ALLOW_LOOPBACK;
    expect(created.status, created.text).toBe(201);
    let importing = true;
    const worker = runWorker(client.username, created.body.id).finally(() => (importing = false));

    const replies: Array<{ what: string; status: number }> = [];
    const record = async (what: string, send: () => Promise<{ status: number; text?: string }>, expectText?: string) => {
      const reply = await send();
      replies.push({ what, status: expectText && !reply.text?.includes(expectText) ? 0 : reply.status });
    };
    /** A form submission, then its mailed link followed: the link's GET is the write checked. */
    const confirm = async (email: string) => {
      const form = await request(`${service.url}/v1/subscribe/${client.trackingKey}`, {
        method: 'POST',
        raw: new URLSearchParams({ email, form_key: formKey }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status, form.text).toBe(200);
      const [mail] = await mailsTo(email);
      await record('confirm', () => request(confirmationLink(mail)), 'Subscription confirmed');
    };
    const small: Array<Promise<void>> = [];
    let sent = 0;
    // Until the import ends (at least 12 small writes, so that some go to its first chunks), one every 150 ms.
    for (let i = 0; (importing || i < 12) && i < 120; i++) {
      await sleep(150);
      sent++;
      if (i % 4 === 0) small.push(record('subscribe', () => post({ email: `single${i}@example.com` })));
      if (i % 4 === 1) small.push(confirm(`optin${i}@example.com`));
      if (i % 4 === 2) small.push(record('unsubscribe', () => post({ email: `member${i % 40}@example.com`, subscribed: false })));
      if (i % 4 === 3) small.push(record('users/delete', () => request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: `member${i % 40}@example.com` }] })));
    }
    await Promise.all(small);
    expect((await worker).map((r) => r.outcome)).toEqual(['done']);
    expect(replies).toHaveLength(sent);
    expect(replies.filter((t) => t.status !== 200)).toEqual([]);
    expect(replies.filter((t) => t.what === 'confirm').length).toBeGreaterThanOrEqual(3);
    const truth = await recount(client.username, client.defaultListId);
    const quarter = (k: number) => Array.from({ length: sent }, (_, i) => i).filter((i) => i % 4 === k);
    // Members: each unsubscribe or delete is of member i % 40; the last word on an address wins.
    const deleted = new Set(quarter(3).map((i) => i % 40));
    const unsubscribed = new Set(quarter(2).map((i) => i % 40).filter((m) => !deleted.has(m)));
    expect(truth).toMatchObject({ subscribed: 40 - deleted.size - unsubscribed.size + quarter(0).length + quarter(1).length + lines, unsubscribed: unsubscribed.size });
    expect((await request(`${url}/count`, { token: client.token })).body).toEqual(truth);
  }, 120_000);
});
