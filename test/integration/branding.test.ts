/**
 * The publisher on reader pages and in opt-in emails: set by the admin CLI
 * (validated, precise errors), shown by each client's own pages and emails
 * only, through the local gateway; pages without branding name the client.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createForm, getClient, setBranding } from '../../shared/clients/clients.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { confirmationLink, DAY_MS, mailsTo, newEmail, runReminderJob } from '../helpers/optin.js';
import { newClient, request, useService, type ApiBody, type TestClient } from '../helpers/service.js';

const service = useService();
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** `npm run admin -- …` as support staff run it. */
async function admin(...args: string[]) {
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), ['infra/admin.ts', ...args], { cwd: root, env: process.env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const ACME = {
  displayName: 'Acme <News> & Co',
  logoUrl: 'https://cdn.acme.example/logo.png',
  brandColour: '#0a4d8c',
  postalAddress: '1 Main Street\nSpringfield 12345',
  privacyUrl: 'https://acme.example/privacy',
};

async function linksOf(client: TestClient, email: string) {
  const listed = await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, { token: client.token });
  const item = listed.body.find((s) => s.email === email)!;
  return { unsubscribe: item.unsubscribe_url, preferences: item.preferences_url };
}

describe('publisher branding', () => {
  it('is set by the admin CLI, which refuses a bad value naming the flag and the problem, and changes only what it is given', { timeout: 120_000 }, async () => {
    const client = await newClient(service);
    const name = client.username;
    await expect(admin('set-branding', name, '--logo', 'http://acme.example/logo.png')).rejects.toThrow(/--logo: must be an absolute https URL without user or password \(got "http:\/\/acme\.example\/logo\.png"\)/);
    await expect(admin('set-branding', name, '--colour', 'red')).rejects.toThrow(/--colour: must be a colour as #rrggbb \(six hexadecimal digits\) \(got "red"\)/);
    await expect(admin('set-branding', name, '--privacy', 'javascript:alert(1)')).rejects.toThrow(/--privacy: must be an absolute https URL/);
    await expect(admin('set-branding', name, '--name', '')).rejects.toThrow(/--name: must not be empty/);
    await expect(admin('set-branding', name, '--remove', 'logo,motto')).rejects.toThrow(/--remove: each setting is one of name, logo, colour, address, privacy \(got "logo,motto"\)/);
    await expect(admin('set-branding', name, '--logo', ACME.logoUrl, '--remove', 'logo')).rejects.toThrow(/--logo and --remove logo: give one of them/);
    await expect(admin('set-branding', name)).rejects.toThrow(/set-branding needs at least one of --name/);
    expect((await getClient(name, { consistent: true }))?.branding).toBeUndefined();

    const set = await admin('set-branding', name, '--name', ACME.displayName, '--logo', ACME.logoUrl, '--colour', '#0A4D8C', '--address', ACME.postalAddress, '--privacy', ACME.privacyUrl);
    expect(set).toEqual({ username: name, branding: ACME });
    expect(await admin('set-branding', name, '--remove', 'logo,colour', '--name', 'Acme')).toEqual({ username: name, branding: { displayName: 'Acme', postalAddress: ACME.postalAddress, privacyUrl: ACME.privacyUrl } });
    expect(await admin('show-client', name)).toMatchObject({ id: name, branding: { displayName: 'Acme' } });
  });

  it("shows each client's own publisher on its reader pages, and the client id on a page without branding", async () => {
    const branded = await newClient(service);
    const plain = await newClient(service);
    await setBranding(branded.username, ACME);
    const email = newEmail('branded-pages');
    await applySubscribers(branded.username, branded.defaultListId, [{ line: 1, email }]);
    await applySubscribers(plain.username, plain.defaultListId, [{ line: 1, email }]);

    for (const url of Object.values(await linksOf(branded, email))) {
      const page = await request(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
      expect(page.text).toContain('<span class="name">Acme &lt;News&gt; &amp; Co</span>');
      expect(page.text).toContain('<img src="https://cdn.acme.example/logo.png" alt=""');
      expect(page.text).toContain('.publisher{background:#0a4d8c;color:#ffffff');
      expect(page.text).toContain('<address>1 Main Street\nSpringfield 12345</address>');
      expect(page.text).toContain('<a href="https://acme.example/privacy">');
      expect(page.text).not.toContain(plain.username);
    }
    for (const url of Object.values(await linksOf(plain, email))) {
      const page = await request(url);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`<span class="name">${plain.username}</span>`);
      expect(page.text).not.toMatch(/Acme|cdn\.acme|<img|<footer|#0a4d8c/);
    }
    // A tampered link shows no publisher at all.
    const tampered = (await linksOf(branded, email)).preferences.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const invalid = await request(tampered);
    expect(invalid.status).toBe(404);
    expect(invalid.text).not.toMatch(/Acme|class="publisher"/);
  });

  it('carries the publisher in the confirmation email, the confirmation page and the reminder, and another client its own', async () => {
    const branded = await newClient(service);
    const plain = await newClient(service);
    await setBranding(branded.username, ACME);
    const subscribe = async (client: TestClient, email: string) => {
      const form = await createForm(client.username, { listIds: [client.defaultListId], global: false });
      const reply = await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { form_key: form, email } });
      expect(reply.status, reply.text).toBe(200);
    };
    const brandedEmail = newEmail('branded-mail');
    const plainEmail = newEmail('plain-mail');
    await subscribe(branded, brandedEmail);
    await subscribe(plain, plainEmail);

    const [mail] = await mailsTo(brandedEmail);
    expect(mail.text).toContain('Thank you for subscribing to the newsletter of Acme <News> & Co.');
    expect(mail.text).toContain('--\nAcme <News> & Co\n1 Main Street\nSpringfield 12345\nPrivacy policy: https://acme.example/privacy');
    expect(mail.html).toContain('Acme &lt;News&gt; &amp; Co');
    expect(mail.html).toContain('<img src="https://cdn.acme.example/logo.png"');
    expect(mail.html).toContain('background:#0a4d8c;color:#ffffff');
    expect(mail.html).toContain('<a href="https://acme.example/privacy">');
    const [plainMail] = await mailsTo(plainEmail);
    expect(plainMail.text).toContain(`Thank you for subscribing to the newsletter of ${plain.username}.`);
    expect(`${plainMail.text}${plainMail.html}`).not.toMatch(/Acme|cdn\.acme|Privacy policy/);

    // The reminder (the plain one too) before the links are used.
    await runReminderJob(new Date(Date.now() + 4 * DAY_MS));
    const reminder = (await mailsTo(brandedEmail)).find((m) => m.subject?.startsWith('Reminder'))!;
    expect(reminder.text).toContain('You asked to subscribe to the newsletter of Acme <News> & Co a few days ago');
    expect(reminder.html).toContain('<img src="https://cdn.acme.example/logo.png"');
    expect(reminder.text).toContain('Privacy policy: https://acme.example/privacy');
    const plainReminder = (await mailsTo(plainEmail)).find((m) => m.subject?.startsWith('Reminder'))!;
    expect(`${plainReminder.text}${plainReminder.html}`).not.toMatch(/Acme|cdn\.acme/);

    const page = await request(confirmationLink(mail));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain('img-src https:');
    expect(page.text).toContain('Your subscription to the newsletter of Acme &lt;News&gt; &amp; Co is confirmed.');
    expect(page.text).toContain('<address>1 Main Street\nSpringfield 12345</address>');
    const plainPage = await request(confirmationLink(plainMail));
    expect(plainPage.text).toContain(`<span class="name">${plain.username}</span>`);
    expect(plainPage.text).not.toMatch(/Acme|<img/);
    const invalid = await request(`${service.url}/v1/optin/confirm/${'x'.repeat(43)}`);
    expect([invalid.status, /class="publisher"/.test(invalid.text)]).toEqual([404, false]);
  });
});
