/**
 * The readable API reference in headless Chromium: /v1/docs renders
 * /v1/openapi.json with the self-hosted Redoc script, and every route of the
 * route table is on the page. Nothing is loaded from another origin.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../shared/routes.js';
import { launchChromium } from '../helpers/browser.js';
import { useService } from '../helpers/service.js';

const service = useService();
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('GET /v1/docs', () => {
  it('renders the API description with the self-hosted Redoc and shows every route', { timeout: 60_000 }, async () => {
    const tab = await browser.newPage();
    // Origins the page got an answer from (Redoc would fetch its logo from its CDN; the page's CSP blocks that).
    const origins = new Set<string>();
    tab.on('response', (res) => origins.add(new URL(res.url()).origin));
    await tab.goto(`${service.url}/v1/docs`);
    await tab.waitForSelector('.api-content', { timeout: 30_000 });
    const text = (await tab.evaluate(() => document.body.textContent ?? '')).replace(/\s+/g, ' ');
    const missing = routeList.filter((route) => !text.includes(route.summary) || !text.includes(route.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    expect([...origins].filter((o) => o !== service.url && !o.startsWith('blob:') && o !== 'null')).toEqual([]);
    await tab.close();
  });
});
