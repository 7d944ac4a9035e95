/**
 * The reader pages in real headless Chromium through the local gateway, with
 * JavaScript turned off: the unsubscribe link's button, and the preference
 * centre used with the keyboard only (labels, Tab, Space, Enter).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForm } from '../../shared/clients/clients.js';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { launchChromium } from '../helpers/browser.js';
import { newClient, request, useService, type ApiBody, type TestClient } from '../helpers/service.js';
import { recount, countSubscribers } from '../helpers/subscribers.js';

const service = useService();

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

async function linksOf(client: TestClient, listId: number, email: string) {
  const listed = await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { token: client.token });
  const item = listed.body.find((s) => s.email === email)!;
  return { unsubscribe: item.unsubscribe_url, preferences: item.preferences_url };
}

describe('reader pages in headless Chromium, without JavaScript', () => {
  it("the unsubscribe page's button unsubscribes; the list's name is shown as text", async () => {
    const client = await newClient(service);
    const list = await createList(client.username, '<i>Morning</i> brief');
    const email = 'chromium-unsub@example.com';
    await applySubscribers(client.username, list.id, [{ line: 1, email }]);
    const { unsubscribe } = await linksOf(client, list.id, email);
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();

    await page.goto(unsubscribe);
    expect(await page.textContent('h1')).toBe('Unsubscribe');
    expect(await page.textContent('main p strong:nth-of-type(2)')).toBe('<i>Morning</i> brief');
    expect(await page.locator('i').count()).toBe(0);
    expect((await getSubscriber(client.username, list.id, email))?.subscribed).toBe(true);
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Unsubscribe' }).click()]);

    expect(response.status()).toBe(200);
    expect(await page.textContent('h1')).toBe('You are unsubscribed');
    expect(await getSubscriber(client.username, list.id, email)).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(await countSubscribers(client.username, list.id)).toEqual(await recount(client.username, list.id));
    await context.close();
  });

  it('the preference centre: labelled checkboxes ticked as they stand, changed and saved with the keyboard; one button leaves every list', async () => {
    const client = await newClient(service);
    const weekly = await createList(client.username, 'Weekly & friends');
    const offers = await createList(client.username, 'Offers');
    await createForm(client.username, { listIds: [offers.id], global: true });
    const email = 'chromium-prefs@example.com';
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email }]);
    await applySubscribers(client.username, weekly.id, [{ line: 1, email }]);
    const { preferences } = await linksOf(client, weekly.id, email);
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();

    await page.goto(preferences);
    const box = (name: string) => page.getByRole('checkbox', { name });
    expect(await box('Default list').isChecked()).toBe(true);
    expect(await box('Weekly & friends').isChecked()).toBe(true);
    expect(await box('Offers').isChecked()).toBe(false);
    expect(await page.getByRole('group', { name: 'Ticked: you receive it' }).count()).toBe(1);

    // Keyboard only: focus the Weekly box, untick it with Space, Tab to Offers, tick it, then Tab to Save and press Enter.
    await box('Weekly & friends').focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save my choices');
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.keyboard.press('Enter')]);
    await page.waitForSelector('[role=status]');
    expect(await page.textContent('[role=status]')).toBe('Your preferences are saved.');
    expect(await box('Weekly & friends').isChecked()).toBe(false);
    expect(await box('Offers').isChecked()).toBe(true);
    expect(await getSubscriber(client.username, weekly.id, email)).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect((await getSubscriber(client.username, offers.id, email))?.subscribed).toBe(true);
    expect((await getSubscriber(client.username, client.defaultListId, email))?.subscribed).toBe(true);

    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Unsubscribe from everything' }).click()]);
    await page.waitForSelector('[role=status]');
    for (const listId of [client.defaultListId, weekly.id, offers.id]) {
      expect((await getSubscriber(client.username, listId, email))?.subscribed).toBe(false);
      expect(await countSubscribers(client.username, listId)).toEqual(await recount(client.username, listId));
    }
    expect(await box('Default list').isChecked()).toBe(false);
    await context.close();
  });
});
