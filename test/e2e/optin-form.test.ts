/**
 * A publisher's plain HTML <form> (no script) posted by real headless
 * Chromium to the local gateway, then the confirmation link followed in the
 * same browser. The page is served from a static mount of the gateway.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForm } from '../../shared/clients/clients.js';
import { createList } from '../../shared/lists/lists.js';
import { escapeHtml } from '../../shared/mail/html.js';
import { messages } from '../../shared/optin/service.js';
import { getSubscriber } from '../../shared/subscribers/service.js';
import { confirmationLink, mailsTo, newEmail } from '../helpers/optin.js';
import { launchChromium } from '../helpers/browser.js';
import { newClient, useService } from '../helpers/service.js';

/** The publisher's form page; its keys are set by the test. */
const site = { trackingKey: '', formKey: '', listIds: [] as number[] };

const formPage = () => `<!doctype html><html><head><meta charset="utf-8"><title>Newsletter</title></head><body>
<form method="post" action="/v1/subscribe/${escapeHtml(site.trackingKey)}">
  <input type="hidden" name="form_key" value="${escapeHtml(site.formKey)}">
  <label>Email <input type="email" name="email" required></label>
  <label>First name <input name="data_first_name"></label>
  ${site.listIds.map((id) => `<label><input type="checkbox" name="email_lists" value="${id}"> List ${id}</label>`).join('\n  ')}
  <label><input type="checkbox" name="open_tracking_consent" value="true"> Open tracking</label>
  <button type="submit">Subscribe</button>
</form></body></html>`;

const service = useService({
  mounts: [{ prefix: '/site/', serve: (path) => (path === 'form.html' ? { status: 200, body: formPage(), contentType: 'text/html; charset=utf-8' } : undefined) }],
});

/** The confirmation emails of an address (the reminder job run by another test file may add a reminder). */
const confirmationsTo = async (email: string) => (await mailsTo(email)).filter((m) => m.subject === 'Please confirm your subscription');

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe('opt-in from a real HTML form in headless Chromium', () => {
  it('submits the form, receives the email, and confirms through the link', async () => {
    // Prepare: a client with a global form over two lists
    const client = await newClient(service);
    const weekly = await createList(client.username, 'Weekly');
    site.trackingKey = client.trackingKey;
    site.listIds = [client.defaultListId, weekly.id];
    site.formKey = await createForm(client.username, { listIds: site.listIds, global: true });
    const email = newEmail('browser');
    const page = await browser.newPage();

    // Act: the reader fills in and submits the form
    await page.goto(`${service.url}/site/form.html`);
    await page.fill('input[name=email]', email);
    await page.fill('input[name=data_first_name]', 'Zoé & Co');
    await page.check(`input[name=email_lists][value="${weekly.id}"]`);
    await page.check('input[name=open_tracking_consent]');
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().includes('/v1/subscribe/')), page.click('button[type=submit]')]);

    // Assess: the answer, the email, the confirmation
    expect(response.status()).toBe(200);
    expect(await response.json()).toEqual({ success: messages.pending });
    const [mail, ...more] = await confirmationsTo(email);
    expect(more).toHaveLength(0);
    expect(mail.text).toMatch(/^Hello,$/m);
    await page.goto(confirmationLink(mail));
    expect(await page.textContent('h1')).toBe('Subscription confirmed');
    expect((await getSubscriber(client.username, weekly.id, email))?.subscribed).toBe(true);
    expect((await getSubscriber(client.username, weekly.id, email))?.openTrackingConsent).toBe(true);
    expect(await getSubscriber(client.username, client.defaultListId, email)).toBeUndefined();
    await page.close();
  });

  it('lets a script on the publisher\'s page (another origin) post JSON through CORS', async () => {
    const client = await newClient(service);
    site.trackingKey = client.trackingKey;
    site.listIds = [client.defaultListId];
    site.formKey = await createForm(client.username, { listIds: site.listIds, global: false });
    const email = newEmail('cors');
    const page = await browser.newPage();
    // localhost and 127.0.0.1 are different origins: the call needs a preflight and CORS headers.
    await page.goto(`${service.url.replace('127.0.0.1', 'localhost')}/site/form.html`);
    const answer = await page.evaluate(
      async ({ api, body }) => {
        const res = await fetch(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as unknown };
      },
      { api: `${service.url}/v1/subscribe/${client.trackingKey}`, body: { email, form_key: site.formKey } },
    );
    expect(answer).toEqual({ status: 200, body: { success: messages.pending } });
    expect(await confirmationsTo(email)).toHaveLength(1);
    await page.close();
  });
});
