/**
 * The catalogue feed job, run as the scheduler runs it (the job's real
 * handler), against a feed server on this machine: conditional polls,
 * upserts, failures that keep the catalogue and show on the client.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBlock, getClient } from '../../shared/clients/clients.js';
import { ddb } from '../../shared/db/client.js';
import { jobs } from '../../shared/jobs.js';
import { setFeed, setSiteHostsAndRereadFeed } from '../../shared/recos/feeds.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { invokeJob } from '../../infra/local/jobs.js';
import { ensureTable } from '../../infra/local/services.js';
import { captureOutput } from '../helpers/logs.js';
import { newClient, request, useService, type TestClient, type RecommendationsBody } from '../helpers/service.js';

vi.hoisted(() => {
  // Metrics print EMF only when asked; the Powertools instance reads this when its module loads.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

// The feed job polls every client with a feed in its table. On the table the test forks share, test/e2e/recos-browser
// runs it too: each file's run polled the other's clients in the same seconds (a client this file failed on purpose
// showed "ok", a feed counted twice). Its own table keeps this file's runs to its own clients. (Set before any table
// access: the table name is read lazily, shared/config.ts.)
process.env.TABLE_NAME = `feeds-${randomUUID().slice(0, 8)}`;
beforeAll(() => ensureTable(process.env.AWS_ENDPOINT_URL_DYNAMODB!, process.env.TABLE_NAME!));

const service = useService();
const root = resolve(import.meta.dirname, '../..');

interface FeedAnswer {
  status: number;
  body: string;
  contentType?: string;
  etag?: string;
  lastModified?: string;
}
let answer: FeedAnswer = { status: 404, body: '' };
/** Answers for a path of their own (several clients' feeds in one run); every other path gets `answer`. */
const answers = new Map<string, FeedAnswer>();
const seen: http.IncomingHttpHeaders[] = [];
let feedServer: http.Server;
let feedUrl: string;

beforeAll(async () => {
  feedServer = http.createServer((req, res) => {
    seen.push(req.headers);
    const answer = answers.get(req.url ?? '') ?? globalAnswer();
    const validators = { ...(answer.etag ? { etag: answer.etag } : {}), ...(answer.lastModified ? { 'last-modified': answer.lastModified } : {}) };
    if (answer.etag && req.headers['if-none-match'] === answer.etag) {
      res.writeHead(304, validators);
      return res.end();
    }
    res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/rss+xml; charset=utf-8', ...validators });
    res.end(answer.body);
  });
  await new Promise<void>((done) => feedServer.listen(0, '127.0.0.1', done));
  feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.xml`;
});

afterAll(async () => {
  await new Promise((done) => feedServer.close(done));
});

/** The answer for paths without one of their own (read when a request arrives). */
const globalAnswer = () => answer;

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
const rss = (items: Array<{ url: string; title: string; at: Date; cats?: string[] }>) =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Gazette</title><link>https://example.org/</link><description>d</description>${items
    .map((i) => `<item><title>${i.title}</title><link>${i.url}</link><description>&lt;p&gt;About ${i.title}&lt;/p&gt;</description><pubDate>${i.at.toUTCString()}</pubDate>${(i.cats ?? []).map((c) => `<category>${c}</category>`).join('')}</item>`)
    .join('')}</channel></rss>`;

const runJob = () => invokeJob({ id: 'catalogueFeeds', ...jobs.catalogueFeeds }, {});
const feedOf = async (client: TestClient) => (await getClient(client.username, { consistent: true }))!.feed!;
const catalogue = async (client: TestClient) => (await request(`${service.url}/v1/articles`, { token: client.token })).body as Array<{ url: string; title: string; description: string; category: string; themes: string[] }>;

describe('catalogue feed job', () => {
  it('polls the feed conditionally, upserts its articles, and keeps the catalogue when the feed fails (visible on the client and as a metric)', async () => {
    const client = await newClient(service, { siteHosts: ['*.feed.example'] });
    const site = `https://news-${randomUUID().slice(0, 8)}.feed.example`;
    await setFeed(client.username, feedUrl);
    const lastModified = hoursAgo(1).toUTCString();
    answer = {
      status: 200,
      etag: '"v1"',
      lastModified,
      body: rss([
        { url: `${site}/one?utm_source=rss`, title: 'One', at: hoursAgo(1), cats: ['World', 'Climate'] },
        { url: `${site}/two`, title: 'Two', at: hoursAgo(2) },
        { url: 'https://elsewhere.example/three', title: 'Three', at: hoursAgo(3) },
      ]),
    };
    seen.length = 0;
    await runJob();
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen[0]['if-none-match']).toBeUndefined();
    expect(await feedOf(client)).toMatchObject({
      url: feedUrl,
      lastStatus: 'ok',
      etag: '"v1"',
      lastModified,
      consecutiveFailures: 0,
      lastFormat: 'rss',
      lastCounts: { created: 2, updated: 0, rejected: 1 },
      firstRejection: "feed.items[2].url: host elsewhere.example is not one of the client's site hosts",
    });
    expect((await feedOf(client)).lastError).toBeUndefined();
    const first = await catalogue(client);
    expect(first.map((a) => a.url)).toEqual([`${site}/one`, `${site}/two`]);
    expect(first[0]).toMatchObject({ title: 'One', description: 'About One', category: 'World', themes: ['world', 'climate'] });

    // Known before any reader: recommended on the first visit.
    const block = await createBlock(client.username);
    const recos = await request<RecommendationsBody>(`${service.url}/v1/clients/${block}/users/first-visitor/recommendations?page_url=${encodeURIComponent(`${site}/two`)}`);
    expect(recos.body.result.recommendation.map((r) => r.guid)).toEqual([articleGuid(`${site}/one`)]);
    expect(recos.body.algo).toBe('freshness');

    // Unchanged feed: a conditional request, answered 304; nothing rewritten.
    seen.length = 0;
    await runJob();
    const conditional = seen.find((h) => h['if-none-match'] === '"v1"');
    expect(conditional?.['if-modified-since']).toBe(lastModified);
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'not-modified', lastCounts: { created: 2, updated: 0, rejected: 1 } });

    // A new item: created, the others updated.
    answer = { status: 200, etag: '"v2"', body: rss([{ url: `${site}/four`, title: 'Four', at: hoursAgo(0.5) }, { url: `${site}/one`, title: 'One, updated', at: hoursAgo(1) }, { url: `${site}/two`, title: 'Two', at: hoursAgo(2) }]) };
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'ok', etag: '"v2"', lastCounts: { created: 1, updated: 2, rejected: 0 } });
    expect((await catalogue(client)).map((a) => a.title)).toEqual(['Four', 'One, updated', 'Two']);

    // Failures: a 500, then a page that is no feed. The catalogue stays; the client shows why; the metric counts.
    answer = { status: 500, body: 'oops' };
    const out = captureOutput();
    try {
      await runJob();
    } finally {
      out.restore();
    }
    const failed = await feedOf(client);
    expect(failed).toMatchObject({ lastStatus: 'failed', consecutiveFailures: 1, etag: '"v2"' });
    expect(failed.lastError).toMatch(/^feed url: the file could not be fetched/);
    const emf = out.json().filter((l) => l._aws && l.CatalogueFeedFailures !== undefined);
    expect(emf.length).toBeGreaterThanOrEqual(1);
    expect(emf[0]._aws!.CloudWatchMetrics[0].Metrics).toContainEqual(expect.objectContaining({ Name: 'CatalogueFeedFailures' }));

    answer = { status: 200, contentType: 'text/html', body: '<!doctype html><html><body>Moved</body></html>' };
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'failed', consecutiveFailures: 2, lastError: 'feed: the feed is not well-formed XML' });
    expect((await catalogue(client)).map((a) => a.title)).toEqual(['Four', 'One, updated', 'Two']);

    // An article deleted through the API stays deleted while the feed still lists it.
    const deleted = await request(`${service.url}/v1/articles?url=${encodeURIComponent(`${site}/two`)}`, { method: 'DELETE', token: client.token });
    expect(deleted.status).toBe(200);
    answer = { status: 200, etag: '"v3"', body: rss([{ url: `${site}/four`, title: 'Four', at: hoursAgo(0.5) }, { url: `${site}/two`, title: 'Two', at: hoursAgo(2) }]) };
    await runJob();
    expect(await feedOf(client)).toMatchObject({
      lastStatus: 'ok',
      consecutiveFailures: 0,
      lastCounts: { created: 0, updated: 1, rejected: 1 },
      firstRejection: 'feed.items[1].url: the article was deleted from the catalogue (DELETE /v1/articles); only PUT /v1/articles brings it back',
    });
    expect((await catalogue(client)).map((a) => a.title)).toEqual(['Four', 'One, updated']);

    // Off: no longer polled; the articles it gave stay.
    await setFeed(client.username, undefined);
    seen.length = 0;
    await runJob();
    expect((await getClient(client.username, { consistent: true }))!.feed).toBeUndefined();
    expect((await catalogue(client)).length).toBe(2);
  });

  it('set-hosts makes the next poll read the unchanged feed again, so items refused for their host are applied', async () => {
    const client = await newClient(service, { siteHosts: ['*.feed.example'] });
    const site = `https://hosts-${randomUUID().slice(0, 8)}.feed.example`;
    const other = `other-${randomUUID().slice(0, 8)}.example`;
    await setFeed(client.username, feedUrl);
    answer = { status: 200, etag: '"h1"', body: rss([{ url: `${site}/a`, title: 'A', at: hoursAgo(1) }, { url: `https://${other}/b`, title: 'B', at: hoursAgo(2) }]) };
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'ok', lastCounts: { created: 1, updated: 0, rejected: 1 } });
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'not-modified' });
    // Before the fix the feed kept answering 304 and B never came in.
    await setSiteHostsAndRereadFeed(client.username, ['*.feed.example', other]);
    expect((await feedOf(client)).etag).toBeUndefined();
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'ok', etag: '"h1"', lastCounts: { created: 1, updated: 1, rejected: 0 } });
    expect((await catalogue(client)).map((a) => a.url)).toEqual([`${site}/a`, `https://${other}/b`]);
  });

  it('a fault on our side for one client fails the run, but every other feed is polled and the client shows the failure', async () => {
    const broken = await newClient(service, { siteHosts: ['*.feed.example'] });
    const fine = await newClient(service, { siteHosts: ['*.feed.example'] });
    const site = `https://fault-${randomUUID().slice(0, 8)}.feed.example`;
    await setFeed(broken.username, feedUrl);
    await setFeed(fine.username, feedUrl);
    answer = { status: 200, etag: `"${randomUUID()}"`, body: rss([{ url: `${site}/a`, title: 'A', at: hoursAgo(1) }]) };
    const send = ddb.send.bind(ddb);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: { input?: { Key?: { pk?: string } } }) => {
      if (command instanceof UpdateCommand && (command.input.Key?.pk as string | undefined)?.startsWith(`ART#${broken.username}#`)) return Promise.reject(Object.assign(new Error('injected bug'), { name: 'ValidationException' }));
      return send(command as never);
    }) as typeof ddb.send);
    const output = captureOutput();
    try {
      await expect(runJob()).rejects.toThrow(/^Internal error after 0 of 1 articles were applied/);
    } finally {
      output.restore();
      vi.restoreAllMocks();
    }
    expect(await feedOf(broken)).toMatchObject({ lastStatus: 'failed', lastError: "an internal error while applying the feed (not the feed's fault); it has been logged and the next poll tries again", consecutiveFailures: 1 });
    expect(await feedOf(fine)).toMatchObject({ lastStatus: 'ok', lastCounts: { created: 1, updated: 0, rejected: 0 } });
    expect(output.json().some((l) => l.message === 'catalogue feed poll failed on our side' && l.clientId === broken.username)).toBe(true);
  });

  it('reads Atom and news sitemaps, and refuses loopback feeds unless FEED_ALLOW_LOOPBACK', async () => {
    const client = await newClient(service, { siteHosts: ['*.feed.example'] });
    const site = `https://news-${randomUUID().slice(0, 8)}.feed.example`;
    await setFeed(client.username, feedUrl);
    // One instant for the feed and the assertion (two calls of hoursAgo can straddle a second on a busy machine).
    const published = hoursAgo(2);
    answer = {
      status: 200,
      contentType: 'application/atom+xml',
      body: `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>x</id><updated>${hoursAgo(1).toISOString()}</updated><entry><title>Atom piece</title><link rel="alternate" href="${site}/atom"/><id>a1</id><published>${published.toISOString()}</published><updated>${hoursAgo(1).toISOString()}</updated><category term="Tech"/></entry></feed>`,
    };
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'ok', lastFormat: 'atom', lastCounts: { created: 1 } });
    const [atom] = await catalogue(client);
    expect(atom).toMatchObject({ url: `${site}/atom`, title: 'Atom piece', category: 'Tech', published_time: Math.floor(published.getTime() / 1000) });

    answer = {
      status: 200,
      contentType: 'application/xml',
      body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"><url><loc>${site}/sitemap-piece</loc><news:news><news:publication><news:name>G</news:name><news:language>en</news:language></news:publication><news:publication_date>${hoursAgo(0.25).toISOString()}</news:publication_date><news:title>From the sitemap</news:title><news:keywords>Sport, Football</news:keywords></news:news></url></urlset>`,
    };
    await runJob();
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'ok', lastFormat: 'sitemap', lastCounts: { created: 1 } });
    expect((await catalogue(client))[0]).toMatchObject({ url: `${site}/sitemap-piece`, title: 'From the sitemap', category: 'Sport', themes: ['sport', 'football'] });

    process.env.FEED_ALLOW_LOOPBACK = 'false';
    try {
      seen.length = 0;
      await runJob();
    } finally {
      process.env.FEED_ALLOW_LOOPBACK = 'true';
    }
    expect(seen).toEqual([]);
    expect(await feedOf(client)).toMatchObject({ lastStatus: 'failed', lastError: 'feed url: the address is not allowed: only public http(s) addresses can be imported' });
    await setFeed(client.username, undefined);
  });
  it("hostile feeds fail only their own client: the run succeeds, every other feed is applied, the cause shows on the client, in the admin CLI and the metric", { timeout: 120_000 }, async () => {
    const site = `https://hostile-${randomUUID().slice(0, 8)}.feed.example`;
    const item = (title: string, path: string, extra = '') => `<item><title>${title}</title><link>${site}/${path}</link>${extra}</item>`;
    const feed = (prolog: string, items: string) => `<?xml version="1.0"?>${prolog}<rss version="2.0"><channel><title>t</title><link>${site}/</link>${items}</channel></rss>`;
    const hostile = {
      // A short doctype on which a backtracking regex takes exponential time: it must be refused at once.
      doctype: { body: `<?xml version="1.0"?><!DOCTYPE ${'[]'.repeat(40)}`, cause: 'feed: the feed is not well-formed XML' },
      entities: { body: feed(`<!DOCTYPE rss [<!ENTITY a "${'a'.repeat(9000)}">]>`, item('&a;'.repeat(20), 'e')), cause: 'feed: the feed cannot be read: its entities expand to more than 100,000 characters (or more than 10,000 references)' },
      nesting: { body: feed('', item('n', 'n', `<description>${'<x>'.repeat(150)}${'</x>'.repeat(150)}</description>`)), cause: 'feed: the feed cannot be read: elements are nested more than 100 deep' },
      proto: { body: feed('', item('p', 'p', '<__proto__>x</__proto__>')), cause: 'feed: the feed cannot be read: an element or attribute is named __proto__, constructor or prototype, which is not read' },
    };
    const hostileClients: Array<{ client: TestClient; cause: string }> = [];
    for (const [name, { body, cause }] of Object.entries(hostile)) {
      const client = await newClient(service, { siteHosts: ['*.feed.example'] });
      const path = `/hostile-${name}-${randomUUID().slice(0, 8)}.xml`;
      answers.set(path, { status: 200, body });
      await setFeed(client.username, new URL(path, feedUrl).href);
      hostileClients.push({ client, cause });
    }
    // A good feed next to them, with far-ahead dates (stored as 1978 and 1974 before; +275760 was taken for 2243) and HTML in its text.
    const fine = await newClient(service, { siteHosts: ['*.feed.example'] });
    const finePath = `/fine-${randomUUID().slice(0, 8)}.xml`;
    answers.set(finePath, {
      status: 200,
      body: feed(
        '',
        item('Far ahead', 'far', '<pubDate>9999-12-31T00:00:00Z</pubDate>') +
          item('Year 6000', 'y6000', '<pubDate>6000-01-01T00:00:00Z</pubDate>') +
          item('Beyond', 'beyond', '<pubDate>+275760-09-13T00:00:00Z</pubDate>') +
          item('&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;Markup', 'markup', '<category>&lt;img src=x onerror=alert(2)&gt;World</category><category>&lt;b&gt;Tech&lt;/b&gt;</category><pubDate>Tue, 10 Jun 2025 06:30:00 +0200</pubDate>'),
      ),
    });
    await setFeed(fine.username, new URL(finePath, feedUrl).href);

    const output = captureOutput();
    let summary: { clients: number; ok: number; failed: number };
    try {
      summary = (await runJob()) as typeof summary;
    } finally {
      output.restore();
    }
    expect(summary.failed).toBeGreaterThanOrEqual(hostileClients.length);
    expect(summary.ok).toBeGreaterThanOrEqual(1);
    for (const { client, cause } of hostileClients) expect(await feedOf(client)).toMatchObject({ lastStatus: 'failed', lastError: cause, consecutiveFailures: 1 });
    expect(output.json().some((l) => l.message === 'job failed')).toBe(false);
    // EMF gives one value per count() call, or a list of them.
    const failures = output.json().flatMap((l) => (l._aws && l.CatalogueFeedFailures !== undefined ? [l.CatalogueFeedFailures as number | number[]].flat() : []));
    expect(failures.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(hostileClients.length);

    const far = `${site}/far`;
    expect(await feedOf(fine)).toMatchObject({
      lastStatus: 'ok',
      lastCounts: { created: 3, updated: 0, rejected: 1 },
      firstRejection: 'feed.items[2].published_time: must be Unix seconds or an ISO 8601 date from 1970 to 9999-12-31 (seconds 0 to 253402300799; milliseconds 253402300800 to 253402300799999): "+275760-09-13T00:00:00Z" is after 9999-12-31T23:59:59Z',
    });
    const articles = await catalogue(fine);
    expect(articles.map((a) => [a.url, (a as unknown as { published_time: number }).published_time])).toEqual([
      [far, 253_402_214_400],
      [`${site}/y6000`, 127_174_492_800],
      [`${site}/markup`, 1_749_529_800],
    ]);
    expect(articles[2]).toMatchObject({ title: 'alert(1)Markup', category: 'World', themes: ['world', 'tech'] });

    // Support sees the cause with the admin CLI (show-client), as for any failed poll.
    const { stdout } = await promisify(execFile)(resolve(root, 'node_modules/.bin/tsx'), ['infra/admin.ts', 'show-client', hostileClients[0].client.username], { cwd: root, env: process.env });
    expect((JSON.parse(stdout) as { feed?: unknown }).feed).toMatchObject({ lastStatus: 'failed', lastError: hostile.doctype.cause });
    for (const { client } of [...hostileClients, { client: fine }]) await setFeed(client.username, undefined);
  });
});
