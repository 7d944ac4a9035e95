/**
 * The reader pages and the confirmation page with and without a publisher's
 * branding, in headless Chromium under their own strict CSP: axe-core finds
 * no violation at a desktop and a phone width, nothing scrolls sideways, and
 * the logo is loaded by the browser (from a route of the test, over https).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForm, setBranding } from '../../shared/clients/clients.js';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { launchChromium } from '../helpers/browser.js';
import { confirmationLink, mailsTo, newEmail } from '../helpers/optin.js';
import { newClient, request, useService, type ApiBody, type TestClient } from '../helpers/service.js';

const service = useService();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const LOGO = 'https://cdn.branding.example/logo.png';
// A 1×1 PNG: what the test's route answers for the logo.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 375, height: 667 },
];

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/** axe-core's violations on the page as loaded (run through the DevTools protocol, which the page's CSP does not govern). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => (window as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run());
  return result.violations.map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/** Each page at each viewport: no axe violation, no sideways scroll; `logo` says whether the page shows the loaded logo. */
async function checkPage(url: string, logo: boolean, act?: (page: Page) => Promise<void>) {
  for (const viewport of VIEWPORTS) {
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    const logoRequests: string[] = [];
    await context.route('https://cdn.branding.example/**', (route) => {
      logoRequests.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'image/png', body: PNG });
    });
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => /Content Security Policy/i.test(m.text()) && blocked.push(m.text()));
    const response = await page.goto(url);
    if (act) await act(page);
    expect(response?.headers()['content-security-policy'], url).toContain("default-src 'none'");
    expect(await axeViolations(page), `${viewport.name} ${url}`).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), `${viewport.name}: sideways scroll`).toBe(true);
    if (logo) {
      await page.waitForFunction(() => document.querySelector<HTMLImageElement>('.publisher img')?.complete === true);
      expect(await page.evaluate(() => document.querySelector<HTMLImageElement>('.publisher img')?.naturalWidth)).toBe(1);
      // Each page shown (the one after a POST too) asked for the logo, and for nothing else there.
      expect(new Set(logoRequests)).toEqual(new Set([LOGO]));
    } else {
      expect(await page.locator('img').count()).toBe(0);
    }
    expect(blocked, 'nothing refused by the CSP').toEqual([]);
    await context.close();
  }
}

async function linksOf(client: TestClient, listId: number, email: string) {
  const listed = await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { token: client.token });
  const item = listed.body.find((s) => s.email === email)!;
  return { unsubscribe: item.unsubscribe_url, preferences: item.preferences_url };
}

describe('branded reader pages in headless Chromium: accessible at a desktop and a phone width, under the strict CSP', () => {
  it('runs axe-core as the checks below do, and it reports a violation where there is one', async () => {
    const page = await browser.newPage();
    await page.setContent('<!doctype html><html lang="en"><head><title>t</title></head><body><main><input type="checkbox"></main></body></html>');
    expect(await axeViolations(page)).toContainEqual(expect.stringMatching(/^label: /));
    await page.close();
  });

  for (const variant of ['branded', 'plain'] as const) {
    it(`${variant}: the preference centre, the unsubscribe page before and after the button, the confirmation page`, { timeout: 120_000 }, async () => {
      const client = await newClient(service);
      if (variant === 'branded') {
        // A light colour: the header and buttons then carry black text.
        await setBranding(client.username, {
          displayName: 'The Springfield Shopper, a rather long publisher name that must wrap on a phone',
          logoUrl: LOGO,
          brandColour: '#ffd23f',
          postalAddress: '742 Evergreen Terrace\nSpringfield, OR 97403\nUnited States of America',
          privacyUrl: 'https://springfield-shopper.example/privacy-policy-and-cookie-statement-of-the-publisher',
        });
      }
      const logo = variant === 'branded';
      const weekly = await createList(client.username, 'Weekly digest');
      const email = newEmail(`axe-${variant}`);
      await applySubscribers(client.username, client.defaultListId, [{ line: 1, email }]);
      await applySubscribers(client.username, weekly.id, [{ line: 1, email }]);
      const links = await linksOf(client, weekly.id, email);

      await checkPage(links.preferences, logo);
      await checkPage(links.unsubscribe, logo);
      // After the button: the "You are unsubscribed" page (the phone pass finds it already unsubscribed).
      await checkPage(links.unsubscribe, logo, async (page) => {
        const button = page.getByRole('button', { name: 'Unsubscribe' });
        if ((await button.count()) > 0) await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), button.click()]);
        await page.waitForSelector('[role=status]');
      });

      const form = await createForm(client.username, { listIds: [client.defaultListId], global: false });
      const subscriber = newEmail(`axe-confirm-${variant}`);
      expect((await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { form_key: form, email: subscriber } })).status).toBe(200);
      const link = confirmationLink((await mailsTo(subscriber))[0]);
      // Desktop: "Subscription confirmed"; phone: "Already confirmed".
      await checkPage(link, logo);
      // A link that is not valid: a page with no publisher.
      await checkPage(`${service.url}/v1/optin/confirm/${'x'.repeat(43)}`, false);
    });
  }
});
