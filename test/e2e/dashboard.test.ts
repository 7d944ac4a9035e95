/**
 * The publisher dashboard (/dashboard) in headless Chromium through the local
 * gateway: sign-in with the form (keyboard), the lists and counts the API
 * answers, an import's progress refreshed while it runs, sign-out, a 401
 * bringing the form back, a phone-width layout without horizontal scroll, no
 * console errors (CSP violations included), and the statistics charts with
 * their data tables equal to the statistics routes' answers. The pages people
 * read run under three browser languages (en-US@posix, which Intl refuses and
 * headless browsers report under LANG=C.UTF-8; en-GB; de-DE). Screenshots go
 * to test-results/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlock, rotateApiKey } from '../../shared/clients/clients.js';
import { createList } from '../../shared/lists/lists.js';
import { dashboardCsp } from '../../shared/dashboard/page.js';
import { invokeJob } from '../../infra/local/jobs.js';
import { jobList } from '../../shared/jobs.js';
import { recordEvents } from '../../shared/events/record.js';
import { EVENT_ID_FIELD, type EventRecord } from '../../shared/events/types.js';
import { launchChromium } from '../helpers/browser.js';
import { newClient, request, useService, type ApiBody, type RecommendationsBody, type TestClient } from '../helpers/service.js';
import { csvRoute, runWorker, useLoopbackImports } from '../integration/imports-helpers.js';

const service = useService();
const files = useLoopbackImports();
const SHOTS = 'test-results';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => browser?.close());

/** The browser languages the pages run under, and the locale the page must show numbers and dates in. */
const LOCALES = [
  { browser: 'en-US@posix', shown: 'en' },
  { browser: 'en-GB', shown: 'en-GB' },
  { browser: 'de-DE', shown: 'de-DE' },
] as const;
type Locale = (typeof LOCALES)[number];

/** Numbers and days as the page must show them in `locale`. */
function formats(locale: Locale) {
  const count = new Intl.NumberFormat(locale.shown, { maximumFractionDigits: 0 });
  const ratio = new Intl.NumberFormat(locale.shown, { style: 'percent', maximumFractionDigits: 2 });
  const day = new Intl.DateTimeFormat(locale.shown, { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' });
  // As rowsOf reads cells: any space (ICU's narrow no-break space included) as one space.
  const plain = (text: string) => text.replace(/\s+/g, ' ');
  return {
    n: (x: number) => plain(count.format(x)),
    pct: (x: number | null) => (typeof x === 'number' ? plain(ratio.format(x)) : '–'),
    day: (d: string) => plain(day.format(new Date(`${d}T00:00:00Z`))),
  };
}
const { n } = formats(LOCALES[0]);

interface Opened {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors, less the expected "Failed to load resource" of the statistics routes not deployed yet (404). */
  errors: string[];
}

async function open(width = 1280, height = 900, locale: Locale = LOCALES[0]): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width, height }, locale: locale.browser });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const url = msg.location().url ?? '';
    if (/status of 404/.test(msg.text()) && new URL(url, service.url).pathname.startsWith('/v1/stats/')) return;
    errors.push(`${msg.text()} (${url})`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  return { context, page, errors };
}

/** Types the client name and key into the form with the keyboard only (Tab from the top of the page) and presses Enter. */
async function signInWithKeyboard(page: Page, client: TestClient): Promise<void> {
  await page.waitForSelector('#signin:not([hidden])');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.id)) !== 'client'; i++) await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('client');
  await page.keyboard.type(client.username);
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('key');
  await page.keyboard.type(client.apiKey);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#lists table');
}

const rowsOf = (page: Page, selector: string) =>
  page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => Array.from(tr.children, (c) => (c.textContent ?? '').replace(/\s+/g, ' ').trim())));

/** The lists table the API's answers make: name, id, then the counts formatted for people. */
async function expectedListRows(client: TestClient, n = formats(LOCALES[0]).n): Promise<string[][]> {
  const lists = await request<ApiBody<'listsList'>>(`${service.url}/v1/newsletters/lists`, { token: client.token });
  const rows: string[][] = [];
  for (const list of lists.body) {
    const c = await request<ApiBody<'subscribersCount'>>(`${service.url}/v1/newsletters/lists/${list.id}/subscribers/count`, { token: client.token });
    rows.push([list.name, String(list.id), n(c.body.subscribed), n(c.body.unsubscribed), n(c.body.cause.READER), n(c.body.cause.PUBLISHER), n(c.body.cause.HARD_BOUNCE)]);
  }
  return rows;
}

async function subscribe(client: TestClient, listId: number, lines: Array<{ email: string; subscribed: boolean }>) {
  const reply = await request(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { method: 'POST', token: client.token, body: lines });
  expect(reply.status, reply.text).toBe(200);
}

/** A client with two lists, subscribers in both and one unsubscribed by the publisher. */
async function clientWithLists(): Promise<TestClient> {
  const client = await newClient(service);
  const weekly = await createList(client.username, 'Weekly <b>news</b>');
  await subscribe(client, client.defaultListId, ['a', 'b', 'c'].map((x) => ({ email: `${x}@dash.example`, subscribed: true })));
  await subscribe(client, weekly.id, ['d', 'e'].map((x) => ({ email: `${x}@dash.example`, subscribed: true })));
  await subscribe(client, weekly.id, [{ email: 'e@dash.example', subscribed: false }]);
  // The counts the page shows are derived data: asked once here, so they are there before the page asks.
  await request(`${service.url}/v1/newsletters/lists/${weekly.id}/subscribers/count`, { token: client.token });
  return client;
}

describe('the publisher dashboard in headless Chromium', () => {
  it('is a strict page: /dashboard/ leads to it, CSP without inline script, its script and style sheet from this origin', async () => {
    const page = await request(`${service.url}/dashboard`);
    expect(page.status).toBe(200);
    const nonce = /<script nonce="([^"]+)"/.exec(page.text)?.[1] ?? '';
    expect(page.headers.get('content-security-policy')).toBe(dashboardCsp(nonce));
    expect(dashboardCsp(nonce)).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]{24}';/);
    expect(dashboardCsp(nonce)).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(page.text).not.toMatch(/<script>|<style>|\sstyle=|\son[a-z]+=/i);
    const slash = await fetch(`${service.url}/dashboard/?x=1`, { redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([308, '/dashboard?x=1']);
    const [script] = /\/dashboard\?file=app\.js&amp;v=[0-9a-f]+/.exec(page.text)!;
    const js = await request(`${service.url}${script.replace('&amp;', '&')}`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('x-content-type-options')]).toEqual([200, 'application/javascript; charset=utf-8', 'nosniff']);
    const css = await request(`${service.url}/dashboard?file=app.css`);
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
    expect(css.text).toContain('.uplot');
    const other = await request<{ cause: string }>(`${service.url}/dashboard?file=other.js`);
    expect([other.status, other.body.cause]).toEqual([400, expect.stringContaining('file must be app.js or app.css')]);
  });

  it("shows an import's progress while it runs, refreshes it, then shows it done with its first errors", { timeout: 60_000 }, async () => {
    const client = await newClient(service);
    const path = `/dash-${randomUUID().slice(0, 8)}.csv`;
    files.server.routes.set(path, csvRoute('email\nok1@dash.example\nnot-an-address\nok2@dash.example\n'));
    const created = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, {
      method: 'POST',
      token: client.token,
      body: { email_list_id: client.defaultListId, url: `${files.server.url}${path}`, update_list: false },
    });
    expect(created.status, created.text).toBe(201);
    const { context, page, errors } = await open();
    await page.goto(`${service.url}/dashboard`);
    await signInWithKeyboard(page, client);

    await page.waitForSelector('#imports table');
    const row = () => rowsOf(page, '#imports').then((rows) => rows.find((r) => r[1] === String(created.body.id)));
    expect((await row())?.[3]).toBe('uploaded');
    expect(await page.getByRole('progressbar', { name: `File ${created.body.id} is being imported` }).count()).toBe(1);

    await runWorker(client.username, created.body.id);
    const done = await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${created.body.id}`, { token: client.token });
    expect(done.body.status).toBe('done');
    await page.waitForFunction((id) => document.querySelector('#imports tbody')?.textContent?.includes('done') && !!id, created.body.id, { timeout: 10_000 });
    const p = done.body.progress;
    expect(await row()).toEqual([done.body.name || `File ${done.body.id}`, String(done.body.id), String(client.defaultListId), 'done', n(p.lines_read), n(p.created), n(p.subscribed), n(p.unsubscribed), n(p.data_changed), n(p.errors), expect.any(String)]);
    expect(p.errors).toBeGreaterThan(0);
    const shown = await page.$$eval('#imports .import-errors li', (lis) => lis.map((li) => li.textContent));
    expect(shown).toEqual(done.body.errors.map((e) => `Line ${n(e.line)}${e.email ? ` (${e.email})` : ''}: ${e.cause}`));
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sign out forgets the token and brings back the form; a 401 (key rotated, or a wrong token) brings it back too', { timeout: 60_000 }, async () => {
    const client = await clientWithLists();
    const { context, page } = await open();
    await page.goto(`${service.url}/dashboard`);
    await signInWithKeyboard(page, client);

    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.isVisible('#signin-form')).toBe(true);
    expect(await page.isHidden('#board')).toBe(true);
    expect(await page.textContent('#signin-error')).toBe('You are signed out.');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.locator('#lists *').count()).toBe(0);

    // Signed in again, the key is rotated (every token issued before is revoked): the next call answers 401.
    await signInWithKeyboard(page, client);
    await rotateApiKey(client.username);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.textContent('#signin-error')).toMatch(/^Your session has ended \(.+\)\. Sign in again\.$/);
    expect(await page.isHidden('#board')).toBe(true);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('client');

    // A wrong token in the tab's storage: the page opens on the form.
    await page.evaluate(() => {
      sessionStorage.setItem('dashboard.token', 'not-a-token');
      sessionStorage.setItem('dashboard.client', 'someone');
    });
    await page.reload();
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.textContent('#signin-error')).toMatch(/^Your session has ended/);
    await context.close();
  });

});

/** Pixels of the figure's canvas in the colours of its series (the dashboard's palette; axes and grid are grey or black): lines are drawn. */
function seriesPixels(page: Page, figure: string): Promise<number> {
  return page.$eval(figure, (fig) => {
    const canvas = fig.querySelector('canvas');
    if (!canvas) return -1;
    const colours = [[0, 114, 178], [213, 94, 0], [0, 158, 115], [204, 121, 167], [230, 159, 0], [86, 180, 233]];
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let hits = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 200 && colours.some(([r, g, b]) => Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 30)) hits++;
    }
    return hits;
  });
}

/**
 * The statistics routes land separately: each test asks its route first. A 404
 * from the fallback (`No route for …`) means not deployed: the section must say
 * "not available" with that cause, and the chart assertions are skipped.
 */
describe.each(LOCALES)('the dashboard under the browser language $browser', (locale) => {
  const f = formats(locale);
  const { n, pct } = f;

  it('signs in with the keyboard; the lists and counts equal the API\'s in the browser\'s locale; the key is stored nowhere; the date inputs are reachable; no console errors', { timeout: 60_000 }, async () => {
    const client = await clientWithLists();
    const { context, page, errors } = await open(1280, 900, locale);
    await page.goto(`${service.url}/dashboard/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Publisher dashboard');

    await signInWithKeyboard(page, client);

    expect(await rowsOf(page, '#lists')).toEqual(await expectedListRows(client, f.n));
    expect(await page.textContent('#who')).toBe(`Signed in as ${client.username}`);
    const stored = await page.evaluate(() => ({ local: localStorage.length, session: JSON.stringify(sessionStorage), key: (document.getElementById('key') as HTMLInputElement).value }));
    expect(stored.local).toBe(0);
    expect(stored.session).not.toContain(client.apiKey);
    expect(stored.key).toBe('');
    const token = await page.evaluate(() => sessionStorage.getItem('dashboard.token'));
    expect((await request(`${service.url}/v1/newsletters/lists`, { token: token! })).status).toBe(200);

    // The date range: labelled inputs, reached with Tab from the sign-out button, last 30 days by default.
    await page.locator('#signout').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('from');
    // Tab walks through the day, month and year fields of a date input before it leaves it.
    for (let i = 0; i < 4 && (await page.evaluate(() => document.activeElement?.id)) !== 'to'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('to');
    const today = new Date().toISOString().slice(0, 10);
    const monthAgo = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    expect([await page.getByLabel('From', { exact: true }).inputValue(), await page.getByLabel('To', { exact: true }).inputValue()]).toEqual([monthAgo, today]);

    await page.waitForFunction(() => ['growth', 'events', 'recos'].every((id) => document.getElementById(id)!.childElementCount > 0));
    await page.screenshot({ path: `${SHOTS}/dashboard-${locale.browser}.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('at a phone width (375 px) nothing scrolls sideways: not the page, not a table', { timeout: 60_000 }, async () => {
    const client = await clientWithLists();
    const { context, page, errors } = await open(375, 740, locale);
    await page.goto(`${service.url}/dashboard`);
    await signInWithKeyboard(page, client);
    await page.waitForFunction(() => ['growth', 'events', 'recos', 'imports'].every((id) => document.getElementById(id)!.childElementCount > 0));
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    expect(widths.client).toBeLessThanOrEqual(375);
    // Every box that scrolls sideways (a table in its scroll region): none.
    const wide = await page.$$eval('main *', (els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map((e) => `${e.tagName}.${e.className} ${e.scrollWidth}>${e.clientWidth}`));
    expect(wide).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/dashboard-phone-${locale.browser}.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
  const today = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  const range = `from=${from}&to=${today}`;

  async function signedIn(client: TestClient) {
    const opened = await open(1280, 900, locale);
    await opened.page.goto(`${service.url}/dashboard`);
    await signInWithKeyboard(opened.page, client);
    return opened;
  }

  /** The route's answer; when it is the fallback's 404, checks the section's message and skips. */
  async function answerOr404<T>(ctx: { skip: (note?: string) => never }, page: Page, section: string, url: string, token: string): Promise<T> {
    const reply = await request<T | { status: number; cause: string }>(url, { token });
    if (reply.status === 404 && String((reply.body as { cause?: string }).cause).startsWith('No route for ')) {
      const cause = (reply.body as { cause: string }).cause;
      await page.waitForSelector(`${section} .unavailable`);
      expect(await page.textContent(`${section} .unavailable`)).toContain(`not available on this service yet (${cause})`);
      expect(await page.locator(`${section} canvas`).count()).toBe(0);
      ctx.skip(`${new URL(url).pathname} is not deployed in this build (404 from the fallback): its section says "not available"`);
    }
    expect(reply.status, reply.text).toBe(200);
    return reply.body as T;
  }

  it('subscribers over time and daily subscribe/unsubscribe of the chosen list', { timeout: 60_000 }, async (ctx) => {
    const client = await clientWithLists();
    const { context, page, errors } = await signedIn(client);
    type ListDay = { date: string; subscribed: number; unsubscribed: number; causes: { READER: number; PUBLISHER: number; HARD_BOUNCE: number }; subscribers: number };
    const days = await answerOr404<ListDay[]>(ctx, page, '#growth', `${service.url}/v1/stats/lists/${client.defaultListId}/daily?${range}`, client.token);
    await page.waitForSelector('#growth figure canvas');
    expect(await page.locator('#growth-list').inputValue()).toBe(String(client.defaultListId));
    expect(await rowsOf(page, '#growth figure:first-of-type table.alt')).toEqual(
      days.map((d) => [f.day(d.date), n(d.subscribers), n(d.subscribed), n(d.unsubscribed), n(d.causes.READER), n(d.causes.PUBLISHER), n(d.causes.HARD_BOUNCE)]),
    );
    expect(await seriesPixels(page, '#growth figure:first-of-type')).toBeGreaterThan(0);
    expect(await seriesPixels(page, '#growth figure:nth-of-type(2)')).toBeGreaterThan(0);
    expect(await page.getAttribute('#growth figure:first-of-type [role=img]', 'aria-label')).toMatch(
      new RegExp(`^Subscribers over time, ${f.day(days[0].date).replace(/[./]/g, '\\$&')} to ${f.day(days[days.length - 1].date).replace(/[./]/g, '\\$&')}: Subscribers from `),
    );

    // One day chosen: the chart's axis shows that day (half a day either side), not years around it.
    await page.fill('#from', today);
    await page.fill('#to', today);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForFunction(() => document.querySelector('#growth figure table.alt tbody')?.childElementCount === 1);
    const [min, max] = (await page.getAttribute('#growth figure:first-of-type .chart', 'data-x-range'))!.split(',').map(Number);
    const midnight = Date.parse(`${today}T00:00:00Z`) / 1000;
    expect([min, max]).toEqual([midnight - 43_200, midnight + 43_200]);
    expect((await rowsOf(page, '#growth figure:first-of-type table.alt')).map((row) => row[0])).toEqual([f.day(today)]);
    await page.screenshot({ path: `${SHOTS}/dashboard-one-day-${locale.browser}.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('events per day by type', { timeout: 60_000 }, async (ctx) => {
    const client = await clientWithLists();
    // A day's counts come from the hourly assembler (docs/api.md, "Statistics"), which builds hours that have ended: yesterday's sends and clicks, assembled.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const sent = (event: 'nl_send' | 'nl_click', n: number) =>
      Array.from({ length: n }, (_, i) => ({ event, date: `${yesterday}T10:0${i}:00.000Z`, email: `r${i}@dash.example`, campaign_id: 'c1', [EVENT_ID_FIELD]: `${event}-${i}` })) as EventRecord[];
    await recordEvents(client.username, [...sent('nl_send', 4), ...sent('nl_click', 2)]);
    await invokeJob(jobList.find((j) => j.id === 'eventsAssembleHours')!, { date: yesterday, clients: [client.username] });
    const { context, page, errors } = await signedIn(client);
    const days = await answerOr404<Array<{ date: string; counts: Record<string, number> }>>(ctx, page, '#events', `${service.url}/v1/stats/events/daily?${range}`, client.token);
    await page.waitForSelector('#events figure canvas');
    const types = [...new Set(days.flatMap((d) => Object.keys(d.counts)))];
    expect(types.length).toBe(7);
    expect(days.find((d) => d.date === yesterday)!.counts).toMatchObject({ nl_send: 4, nl_click: 2 });
    expect(await page.$$eval('#events table.alt thead th', (ths) => ths.map((th) => th.textContent))).toEqual(['Day', ...types]);
    expect(await rowsOf(page, '#events table.alt')).toEqual(days.map((d) => [f.day(d.date), ...types.map((t) => n(d.counts[t] ?? 0))]));
    expect(await seriesPixels(page, '#events figure')).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('per block: served, clicks and CTR over time', { timeout: 90_000 }, async (ctx) => {
    const client = await newClient(service, { siteHosts: ['*.dash.example'] });
    const site = `https://news-${randomUUID().slice(0, 8)}.dash.example`;
    for (const [i, reader] of ['r1', 'r2', 'r3'].entries()) {
      for (const page of ['a', 'b', 'c'].slice(0, i + 1)) {
        const url = `${site}/${page}`;
        const tracked = await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: reader, url, title: `Page ${page}`, published_time: new Date().toISOString() } });
        expect(tracked.status, tracked.text).toBe(200);
      }
    }
    await service.drain();
    const block = await createBlock(client.username, { name: `Home page ${locale.browser}` });
    const recos = await request<RecommendationsBody>(`${service.url}/v1/clients/${block}/users/r1/recommendations`);
    expect(recos.status, recos.text).toBe(200);
    const first = recos.body.result.recommendation[0];
    if (first) await fetch(first.url.startsWith('http') ? first.url : `${service.url}${first.url}`, { redirect: 'manual' });
    await service.drain();

    const { context, page, errors } = await signedIn(client);
    type RecoDay = { date: string; block_key: string; variant: string; served: number; impressions: number; clicks: number; ctr: number | null };
    const rows = await answerOr404<RecoDay[]>(ctx, page, '#recos', `${service.url}/v1/stats/recommendations/daily?${range}`, client.token);
    const blocks = [...new Set(rows.map((r) => r.block_key))];
    if (blocks.length === 0) {
      await page.waitForSelector('#recos p');
      expect(await page.textContent('#recos')).toContain('No recommendations were served in this range.');
    }
    for (const key of blocks) {
      const figure = `#recos section[data-block-key="${key}"] figure`;
      await page.waitForSelector(`${figure} canvas`);
      expect(await rowsOf(page, `${figure} table.alt`)).toEqual(rows.filter((r) => r.block_key === key).map((r) => [f.day(r.date), r.variant, n(r.served), n(r.impressions), n(r.clicks), pct(r.ctr)]));
      expect(await seriesPixels(page, figure)).toBeGreaterThan(0);
    }
    expect(blocks).toContain(block);
    // The block by the name its publisher gave it (GET /v1/blocks), its key beside it.
    const section = page.locator(`#recos section[data-block-key="${block}"]`);
    expect([await section.getAttribute('aria-label'), await section.locator('h3').textContent(), await section.locator('.key').textContent()]).toEqual([
      `Block Home page ${locale.browser}`,
      `Block Home page ${locale.browser}`,
      `Key ${block}`,
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
