/**
 * The browser library in real headless Chromium (Debian's /usr/bin/chromium,
 * driven by playwright-core): a reader browses the demo site served by the
 * local gateway, each page tracks itself and shows a smart section.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlock, getClient, setSignedIds } from '../../shared/clients/clients.js';
import { jobs } from '../../shared/jobs.js';
import { setFeed } from '../../shared/recos/feeds.js';
import { invokeJob } from '../../infra/local/jobs.js';
import { seedDemo } from '../../infra/local/seed.js';
import { readerSignature } from '../../shared/recos/reader-ids.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { recosMounts, type DemoArticle, type DemoKeys } from '../../infra/local/recos-mounts.js';
import { launchChromium } from '../helpers/browser.js';
import { newClient, request, useService } from '../helpers/service.js';

let keys: DemoKeys | undefined;
/** The demo client of these tests (its site host: the gateway's 127.0.0.1). */
let owner = '';
const service = useService({ mounts: recosMounts(() => keys) });
let browser: Browser;

const page = (slug: string) => `${service.url}/demo/articles/${slug}.html`;
const demoArticles = JSON.parse(readFileSync('infra/local/demo-site/articles.json', 'utf8')) as DemoArticle[];

beforeAll(async () => {
  // The demo site is served by the gateway at 127.0.0.1: the client's site host.
  const client = await newClient(service, { siteHosts: ['127.0.0.1'] });
  owner = client.username;
  keys = { trackingKey: client.trackingKey, blockKey: await createBlock(client.username, { name: 'e2e block' }) };
  // Other readers made the rest of the site known (and popular) before our reader arrives.
  for (const [i, slug] of ['football-final', 'ai-newsrooms', 'bread-recipe', 'chip-shortage', 'heatwave-cities'].entries()) {
    const a = demoArticles.find((d) => d.slug === slug)!;
    const body = { url: page(slug), title: a.title, description: a.description, category: a.section, themes: a.themes, published_time: Math.floor(Date.now() / 1000) - a.hoursAgo * 3600 };
    for (let r = 0; r <= i; r++) {
      const reply = await request(`${service.url}/v1/track/${keys.trackingKey}`, { method: 'POST', body: { user_id: `crowd-${r}`, ...body } });
      expect(reply.status).toBe(200);
    }
  }
  await service.drain();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('browser library on the demo site', () => {
  it('tracks pages, shows recommendations without the current and read pages, and clicks through the redirect', async () => {
    const context = await browser.newContext();
    const tab = await context.newPage();
    const visited = ['climate-summit', 'city-bikes', 'heatwave-cities'];
    const asked: URL[] = [];
    tab.on('request', (req) => {
      if (req.url().includes('/recommendations?')) asked.push(new URL(req.url()));
    });
    const ids: string[] = [];
    let shown: Array<{ href: string; guid: string }> = [];
    for (const slug of visited) {
      await tab.goto(page(slug));
      await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
      ids.push(await tab.evaluate(() => (window as unknown as { Recos: { getAnonymousUserId(): string } }).Recos.getAnonymousUserId()));
      shown = await tab.$$eval('#recos a', (links) => links.map((a) => ({ href: (a as HTMLAnchorElement).href, guid: a.getAttribute('data-guid') ?? '' })));
      // The reader stays on the page longer than the tracking queue's batching window: their read is applied before the next page.
      await service.drain();
    }
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^anon-[0-9a-f]{32}$/);
    expect((await context.cookies()).find((c) => c.name === 'recos_uid')?.value).toBe(ids[0]);

    // On the third page: 4 items, none of them the current page or the two pages read before.
    expect(shown).toHaveLength(4);
    const excluded = new Set(visited.map((slug) => articleGuid(page(slug))));
    for (const item of shown) {
      expect(excluded.has(item.guid)).toBe(false);
      expect(item.href).toMatch(new RegExp(`^${service.url}/v1/r/${keys!.blockKey}/${item.guid}\\?rid=default\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{16}$`));
    }
    mkdirSync('test-results', { recursive: true });
    await tab.screenshot({ path: 'test-results/recos-demo.png', fullPage: true });

    // The library sends the full page URL itself (browsers send only the origin as referer cross-site) and asks JSONP.
    expect(asked.map((u) => u.searchParams.get('page_url'))).toEqual(visited.map(page));
    // Through the library's own callback, which hands the response to showRecommendations (the page shows it: data-state done).
    expect(asked.every((u) => /^Recos\.callbacks\.c\d+$/.test(u.searchParams.get('callback') ?? '') && u.pathname.endsWith(`/users/${ids[0]}/recommendations`))).toBe(true);

    // excluded_articles leaves an article out.
    const first = demoArticles.map((a) => page(a.slug)).find((url) => articleGuid(url) === shown[0].guid)!;
    await tab.evaluate(
      ([blockKey, url]) => {
        document.getElementById('recos')!.setAttribute('data-state', 'loading');
        (window as unknown as { Recos: { getRecommendations(...a: unknown[]): void } }).Recos.getRecommendations(blockKey, '', 'showRecommendations', 4, [url]);
      },
      [keys!.blockKey, first],
    );
    await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
    const again = await tab.$$eval('#recos a', (links) => links.map((a) => a.getAttribute('data-guid')));
    expect(again).toHaveLength(3);
    expect(again).not.toContain(shown[0].guid);
    expect(asked.at(-1)!.searchParams.getAll('excluded[]')).toEqual([first]);

    // Clicking goes through the service's redirect (302) to the article itself.
    const redirects: number[] = [];
    tab.on('response', (res) => {
      if (res.url().includes('/v1/r/')) redirects.push(res.status());
    });
    await Promise.all([tab.waitForURL((url) => url.pathname.startsWith('/demo/articles/'), { timeout: 10_000 }), tab.click('#recos a >> nth=0')]);
    expect(redirects).toEqual([302]);
    expect(articleGuid(tab.url())).toBe(again[0]);
    await context.close();
  });

  // Which block asks first is the page's race: its own block asks once its page view is tracked. Slowed, the second block asks
  // first and takes the co-read articles (a full test suite failed this way when the reasons were read from the page's block only).
  it.each([
    ['as the page asks them', 0],
    ['the second block asking first (the page view tracked 800 ms late)', 800],
  ])('never shows an article twice on a page with two blocks, and says why each item is recommended: %s', async (_, trackDelayMs) => {
    const second = await createBlock(owner, { name: 'second block' });
    const context = await browser.newContext();
    const tab = await context.newPage();
    const asked: URL[] = [];
    tab.on('request', (req) => {
      if (req.url().includes('/recommendations?')) asked.push(new URL(req.url()));
    });
    // A reader who read the football final, now on the AI article: its co-readers also read other stories.
    await tab.goto(page('football-final'));
    await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
    await service.drain();
    if (trackDelayMs > 0) {
      await tab.route('**/v1/track/**', async (route) => {
        await new Promise((done) => setTimeout(done, trackDelayMs));
        await route.continue();
      });
    }
    await tab.goto(page('ai-newsrooms'));
    // The page's block and a second one asked at once, as a page with two smart sections does.
    await tab.evaluate((block) => {
      const more = document.createElement('ol');
      more.id = 'more';
      document.querySelector('aside')!.appendChild(more);
      const recos = (window as unknown as { Recos: { reasonText(item: unknown): string } }).Recos;
      (window as unknown as { showMore(r: { result: { recommendation: Array<{ guid: string }> } }): void }).showMore = (r) => {
        for (const item of r.result.recommendation) {
          const li = document.createElement('li');
          li.setAttribute('data-guid', item.guid);
          const reason = document.createElement('span');
          reason.className = 'reason';
          reason.textContent = recos.reasonText(item);
          li.appendChild(reason);
          more.appendChild(li);
        }
        more.setAttribute('data-state', 'done');
      };
      (window as unknown as { Recos: { getRecommendations(...a: unknown[]): void } }).Recos.getRecommendations(block, null, 'showMore', 4, []);
    }, second);
    await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
    await tab.waitForSelector('#more[data-state="done"]', { timeout: 10_000 });
    const first = await tab.$$eval('#recos a', (links) => links.map((a) => a.getAttribute('data-guid')!));
    const more = await tab.$$eval('#more li', (items) => items.map((li) => li.getAttribute('data-guid')!));
    expect(first.length).toBeGreaterThan(0);
    expect(more.length).toBeGreaterThan(0);
    expect(more.filter((g) => first.includes(g))).toEqual([]);
    // The requests went one after the other (whichever the page made first), the later naming the earlier block's articles.
    const [earlier, later] = asked.slice(-2);
    const earlierShown = earlier.pathname.includes(`/clients/${second}/`) ? more : first;
    expect(new Set(earlier.searchParams.getAll('excluded[]'))).toEqual(new Set());
    expect(new Set(later.searchParams.getAll('excluded[]'))).toEqual(new Set(earlierShown));

    // Reasons: each shown item says why, as text under it; co-reads name the page they come from (this one or the one read before).
    // The co-read items go to whichever block asked first (the later one excludes them): the reasons of both blocks together.
    const reasons = await tab.$$eval('#recos li, #more li', (items) => items.map((li) => li.querySelector('.reason')?.textContent ?? ''));
    expect(reasons).toHaveLength(first.length + more.length);
    for (const text of reasons) expect(text).toMatch(/^(Because you read “.+”|Because you follow .+|Popular now|Just published|Editor’s pick)$/);
    const titles = demoArticles.filter((a) => a.slug === 'football-final' || a.slug === 'ai-newsrooms').map((a) => `Because you read “${a.title}”`);
    expect(reasons.some((t) => titles.includes(t))).toBe(true);
    if (trackDelayMs > 0) expect(earlier.pathname).toContain(`/clients/${second}/`);
    else await tab.screenshot({ path: 'test-results/recos-demo-two-blocks.png', fullPage: true });
    await context.close();
  });

  it('passes a signed reader id (trackPage and getRecommendations take {sig} last) for a publisher that requires signatures', async () => {
    const publisher = await newClient(service, { siteHosts: ['127.0.0.1'] });
    const block = await createBlock(publisher.username, { name: 'signed block' });
    const { signingSecret } = await setSignedIds(publisher.username, true);
    const sig = readerSignature(signingSecret!, 'member-42');
    const context = await browser.newContext();
    const tab = await context.newPage();
    const statuses: number[] = [];
    tab.on('response', (res) => {
      if (res.url().includes(`/clients/${block}/`)) statuses.push(res.status());
    });
    await tab.goto(page('climate-summit'));
    await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
    type Lib = { trackPage(...a: unknown[]): Promise<boolean>; getRecommendations(...a: unknown[]): void };
    const tracked = await tab.evaluate(
      async ([key, s]) => {
        const Recos = (window as unknown as { Recos: Lib }).Recos;
        return [await Recos.trackPage(key, 'member-42'), await Recos.trackPage(key, 'member-42', { sig: 'f'.repeat(64) }), await Recos.trackPage(key, 'member-42', { sig: s })];
      },
      [publisher.trackingKey, sig],
    );
    expect(tracked).toEqual([false, false, true]);
    const shown = await tab.evaluate(
      ([b, s]) =>
        new Promise<unknown>((done) => {
          const w = window as unknown as { Recos: Lib; signedShown(r: unknown): void };
          w.signedShown = done;
          w.Recos.getRecommendations(b, 'member-42', 'signedShown', 4, [], { sig: s });
        }),
      [block, sig],
    );
    expect(shown).toMatchObject({ result: { recommendation: expect.any(Array) as unknown[] } });
    // Unsigned, the service refuses: the display function is never called.
    await tab.evaluate((b) => (window as unknown as { Recos: Lib }).Recos.getRecommendations(b, 'member-42', 'signedShown', 4), block);
    await expect.poll(() => statuses).toEqual([200, 403]);
    await context.close();
  });

  it("shows recommendations on a first-time visitor's first article page: npm start's seed points the demo client at the demo feed, the feed job fills the catalogue", async () => {
    // What `npm start` does: seed the demo client (its feed is the demo site's /demo/feed.xml), then run every scheduled job once.
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-seed-'));
    const demo = await seedDemo(dataDir, service.url);
    expect((await getClient(demo.username))!.feed).toMatchObject({ url: `${service.url}/demo/feed.xml` });
    const before = keys;
    keys = { trackingKey: demo.tracking_key, blockKey: demo.block_key };
    try {
      await invokeJob({ id: 'catalogueFeeds', ...jobs.catalogueFeeds }, {});
      expect((await getClient(demo.username, { consistent: true }))!.feed).toMatchObject({ lastStatus: 'ok', lastCounts: { created: demoArticles.length, rejected: 0 } });

      const context = await browser.newContext();
      const tab = await context.newPage();
      const first = demoArticles[0];
      await tab.goto(page(first.slug));
      await tab.waitForSelector('#recos[data-state="done"]', { timeout: 10_000 });
      const shown = await tab.$$eval('#recos a', (links) => links.map((a) => a.getAttribute('data-guid')));
      expect(shown).toHaveLength(4);
      expect(shown).not.toContain(articleGuid(page(first.slug)));
      const catalogue = new Set(demoArticles.map((a) => articleGuid(page(a.slug))));
      expect(shown.every((g) => catalogue.has(g!))).toBe(true);
      expect(await tab.textContent('#recos-algo')).toMatch(/^algo: .*freshness/);
      await tab.screenshot({ path: 'test-results/recos-demo-first-visit.png', fullPage: true });
      await context.close();
    } finally {
      keys = before;
      await setFeed(demo.username, undefined);
    }
  });
});
