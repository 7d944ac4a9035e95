/**
 * The container's short-lived copies of the popular list and of candidate
 * articles (shared/recos/read-cache.ts) against DynamoDB Local: a copy may
 * predate a deletion, and the ranking still never offers the deleted article;
 * a revived (PUT again) article is offered at once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createBlock, createClient, getClient, resolvePublicKey } from '../../shared/clients/clients.js';
import { batchWrite, ddb } from '../../shared/db/client.js';
import { DynamoStore } from '../../shared/recos/dynamo-store.js';
import { recosItems } from '../../shared/recos/dynamo-items.js';
import { addView } from '../../shared/recos/ranking.js';
import { rankingFor } from '../../shared/recos/recommend.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { blockSettings } from '../../shared/recos/settings.js';
import type { Article } from '../../shared/recos/types.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type RecommendationsBody } from '../helpers/service.js';
import { NEIGHBOUR_MAX_AGE_SECONDS, NEIGHBOUR_REFRESH_SECONDS } from '../../shared/recos/neighbours.js';
import { CANDIDATES } from '../../shared/recos/recommend.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { fitPopular, fromPopularItem, POPULAR_SNAPSHOT_MAX_BYTES, popularItem } from '../../shared/recos/dynamo-items.js';
import { DynamoViewStore } from '../../shared/recos/dynamo-views.js';
import { POPULAR_SNAPSHOT_MAX_AGE_SECONDS, POPULAR_SNAPSHOT_REFRESH_SECONDS } from '../../shared/recos/read-cache.js';

const service = useService();
let calls = 0;
/** The commands sent, by name (the popular snapshot tests tell a GetItem from the popularity Query). */
const commands: string[] = [];
ddb.middlewareStack.add((next, context) => async (input) => {
  calls++;
  commands.push(context.commandName ?? '?');
  return next(input);
}, { step: 'initialize', name: 'testCallCounter' });

const nowSeconds = () => Math.floor(Date.now() / 1000);

function article(url: string, views: number, now: number): Article {
  let hot: number | undefined;
  for (let i = 0; i < views; i++) hot = addView(hot, now - 60);
  return { guid: articleGuid(url), url, title: url.slice(-1).toUpperCase(), desc: '', image: '', category: 'news', themes: ['x'], published: now - 3600, firstSeen: now - 3600, lastSeen: now - 60, views, clicks: 0, hot: hot ?? 0 };
}

async function setup() {
  const clientId = `cache-${randomUUID().slice(0, 8)}`;
  await createClient(clientId, { siteHosts: ['cache.example'] });
  const now = nowSeconds();
  const [a, b, c] = [article('https://cache.example/a', 5, now), article('https://cache.example/b', 3, now), article('https://cache.example/c', 2, now)];
  await batchWrite([a, b, c].map((x) => ({ PutRequest: { Item: recosItems.article(clientId, x) } })));
  const blockKey = await createBlock(clientId);
  const key = (await resolvePublicKey('block', blockKey))!;
  const settings = blockSettings(key, await getClient(clientId));
  const store = new DynamoStore();
  const ranking = async (q: { pageUrl?: string } = {}) => (await rankingFor(store, settings, { clientId, userId: 'reader', excluded: [], now: nowSeconds(), ...q })).map((r) => r.article.guid);
  return { clientId, store, a, b, c, ranking, blockKey };
}

describe('recommendations read cache', () => {
  it('a cached popular list may still hold a deleted article: the ranking leaves it out, a new container does not hold it', async () => {
    const { clientId, store, a, b, c, ranking } = await setup();
    expect(await ranking()).toEqual([a.guid, b.guid, c.guid]);
    expect(await store.deleteArticle(clientId, a.guid)).toBe(true);
    // The copy predates the deletion (this is what the deletion windows are read for).
    expect((await store.hotArticles(clientId, 200, { cached: true })).map((x) => x.guid)).toContain(a.guid);
    expect((await store.context(clientId, { deletions: true })).deleted).toEqual(new Set([a.guid]));
    expect(await ranking()).toEqual([b.guid, c.guid]);
    expect((await new DynamoStore().hotArticles(clientId, 200, { cached: true })).map((x) => x.guid)).toEqual([b.guid, c.guid]);
  });

  it('a cached copy of a co-read article is not used once the article is deleted; PUT brings it back at once', async () => {
    const { clientId, store, a, b, c, ranking } = await setup();
    // As when c was fetched as a fresh or co-read candidate: a copy of it is kept.
    await store.articles(clientId, [c.guid], { cached: true });
    expect(await store.deleteArticle(clientId, c.guid)).toBe(true);
    expect((await store.articles(clientId, [c.guid], { cached: true })).map((x) => x.guid)).toEqual([c.guid]);
    expect(await store.articles(clientId, [c.guid], { cached: true, uncached: new Set([c.guid]) })).toEqual([]);
    expect(await ranking({ pageUrl: b.url })).toEqual([a.guid]);

    // Revived by PUT (counters from 0, on the fresh list): offered at once, with its new metadata, though a copy of the old one is still cached.
    const now = nowSeconds();
    const revived = await store.upsertArticle(clientId, { url: c.url, title: 'C again', published: now - 60 }, now);
    expect(revived?.created).toBe(true);
    await store.addFresh(clientId, [{ guid: c.guid, published: now - 60 }], now);
    const ranked = await rankingFor(store, blockSettings((await resolvePublicKey('block', await createBlock(clientId)))!, await getClient(clientId)), {
      clientId,
      userId: 'reader',
      excluded: [],
      now,
    });
    expect(ranked.map((r) => [r.article.guid, r.article.title])).toContainEqual([c.guid, 'C again']);
  });

  it('a recommendation request makes at most 4 DynamoDB calls, 1 once the container keeps the popular list and the block key', async () => {
    const { blockKey, a, b, c } = await setup();
    const url = `${service.url}/v1/clients/${blockKey}/users/reader/recommendations`;
    dropReadCaches();
    let before = calls;
    const cold = await request<RecommendationsBody>(url);
    expect(cold.status, cold.text).toBe(200);
    expect(cold.body.result.recommendation.map((r) => r.guid)).toEqual([a.guid, b.guid, c.guid]);
    // The block key, then the context BatchGetItem (with the client) and, in parallel, the popular snapshot (none: this client's
    // articles were written directly, no page view made one) and the popularity Query.
    expect(calls - before).toBe(4);
    before = calls;
    const warm = await request<RecommendationsBody>(url);
    // The same answer but for its own recomm_id (new for every answer, signed per article in the redirect URLs).
    const sameIds = (body: RecommendationsBody) => JSON.parse(JSON.stringify(body).replace(new RegExp(`${body.recomm_id}(\\.[A-Za-z0-9_-]{16})?`, 'g'), '<recomm_id>')) as unknown;
    expect(warm.body.recomm_id).not.toBe(cold.body.recomm_id);
    expect(sameIds(warm.body)).toEqual(sameIds(cold.body));
    expect(calls - before).toBe(1);
  });
});

describe('fresh-list copies and neighbour snapshots', () => {
  const recos = (blockKey: string, userId: string, page?: string) =>
    request<RecommendationsBody>(`${service.url}/v1/clients/${blockKey}/users/${userId}/recommendations?rows=20${page ? `&page_url=${encodeURIComponent(page)}` : ''}`);
  const guidsOf = (reply: { body: RecommendationsBody }) => reply.body.result.recommendation.map((r) => r.guid);

  it('a container keeps the fresh list while its version matches; an article added to it is offered at the next request', async () => {
    const { clientId, store, blockKey } = await setup();
    dropReadCaches();
    await recos(blockKey, 'reader');
    let before = calls;
    await recos(blockKey, 'reader');
    // The context BatchGetItem only: it read the fresh-list version item, not the list.
    expect(calls - before).toBe(1);
    const now = nowSeconds();
    const d = article('https://cache.example/d', 0, now);
    await store.upsertArticle(clientId, { url: d.url, title: 'D', published: now - 60 }, now);
    await store.addFresh(clientId, [{ guid: d.guid, published: now - 60 }], now);
    before = calls;
    const reply = await recos(blockKey, 'reader');
    expect(guidsOf(reply)).toContain(d.guid);
    // Context, the list read again (its version moved), the new article.
    expect(calls - before).toBe(3);
    before = calls;
    expect(guidsOf(await recos(blockKey, 'reader'))).toContain(d.guid);
    expect(calls - before).toBe(1);
  });

  it('the page-view consumer writes a viewed page its neighbour snapshot; a request on it reads the neighbours from it, never a deleted one; a rewrite leaves the deleted one out', async () => {
    const client = await newClient(service, { siteHosts: ['snap.example'] });
    const clientId = client.username;
    const now = nowSeconds();
    // 200 popular articles: the snapshot leaves them out (a request has them from the popular list).
    const popular = Array.from({ length: CANDIDATES.popular }, (_, i) => article(`https://snap.example/popular-${i}`, 50, now));
    await batchWrite(popular.map((x) => ({ PutRequest: { Item: recosItems.article(clientId, x) } })));
    const page = 'https://snap.example/page';
    const other = 'https://snap.example/other';
    const track = (userId: string, url: string) => request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: userId, url, title: `About ${url}`, themes: ['x'] } });
    expect((await track('r1', other)).status).toBe(200);
    // Applied first: the two views could otherwise land in two batches running at once (the local queue spreads them over
    // five pollers, as SQS does), and the page's batch would count the co-read only if it ran second.
    await service.drain();
    expect((await track('r1', page)).status).toBe(200);
    await service.drain();
    const store = new DynamoStore();
    const snapshot = (await store.context(clientId, { guid: articleGuid(page), neighbours: true })).neighbours;
    expect(snapshot?.articles.map((x) => [x.guid, x.title])).toEqual([[articleGuid(other), `About ${other}`]]);
    expect(snapshot!.at).toBeGreaterThanOrEqual(now);

    const blockKey = await createBlock(clientId);
    dropReadCaches();
    await recos(blockKey, 'r2', page);
    let before = calls;
    const warm = await recos(blockKey, 'r2', page);
    expect(guidsOf(warm)).toContain(articleGuid(other));
    // One BatchGetItem: the neighbour came with the page's snapshot, not from a second read.
    expect(calls - before).toBe(1);

    expect(await store.deleteArticle(clientId, articleGuid(other))).toBe(true);
    before = calls;
    expect(guidsOf(await recos(blockKey, 'r2', page))).not.toContain(articleGuid(other));

    // A minute later (by view time) the page's next view rewrites its snapshot: the deleted article is left out.
    const later = Date.now() + (NEIGHBOUR_REFRESH_SECONDS + 1) * 1000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => later);
    try {
      expect((await track('r3', page)).status).toBe(200);
      await service.drain();
    } finally {
      clock.mockRestore();
    }
    const rewritten = (await store.context(clientId, { guid: articleGuid(page), neighbours: true })).neighbours;
    expect(rewritten?.at).toBeGreaterThan(snapshot!.at);
    expect(rewritten?.articles.map((x) => x.guid) ?? []).not.toContain(articleGuid(other));
  });

  it('a request uses a snapshot younger than NEIGHBOUR_MAX_AGE_SECONDS, and reads the articles of an older one', async () => {
    const { clientId, a, b, blockKey } = await setup();
    const now = nowSeconds();
    // Past the popular list (200): the co-read neighbour of b is a candidate only as a neighbour.
    const popular = Array.from({ length: CANDIDATES.popular }, (_, i) => article(`https://cache.example/popular-${i}`, 50, now));
    const n = article('https://cache.example/n', 1, now);
    await batchWrite([...popular, n].map((x) => ({ PutRequest: { Item: recosItems.article(clientId, x) } })));
    await batchWrite([{ PutRequest: { Item: recosItems.covisits(clientId, b.guid, { [n.guid]: 3, [a.guid]: 1 }, now) } }]);
    const titleOfN = async () => (await recos(blockKey, 'reader', b.url)).body.result.recommendation.find((r) => r.guid === n.guid)?.title;
    const snapshotAt = async (at: number) => {
      await batchWrite([{ PutRequest: { Item: recosItems.neighbours(clientId, b.guid, { at, articles: [{ ...n, title: 'as in the snapshot' }] }) } }]);
      dropReadCaches();
    };
    await snapshotAt(now - NEIGHBOUR_MAX_AGE_SECONDS - 1);
    expect(await titleOfN()).toBe(n.title);
    await snapshotAt(now);
    expect(await titleOfN()).toBe('as in the snapshot');
  });
});

describe('popular snapshot (a cold container)', () => {
  const recos = (blockKey: string, userId: string) => request<RecommendationsBody>(`${service.url}/v1/clients/${blockKey}/users/${userId}/recommendations?rows=20`);
  const guidsOf = (reply: { body: { result: { recommendation: Array<{ guid: string }> } } }) => reply.body.result.recommendation.map((r) => r.guid);

  it('the page-view consumer writes it; a cold container ranks from it and its fresh articles with one GetItem, no Query; a deleted article never comes from it', async () => {
    const client = await newClient(service, { siteHosts: ['pop.example'] });
    const clientId = client.username;
    const track = (userId: string, url: string) => request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: userId, url, title: `About ${url}` } });
    const [first, second] = ['https://pop.example/first', 'https://pop.example/second'];
    expect((await track('r1', first)).status).toBe(200);
    expect((await track('r2', first)).status).toBe(200);
    expect((await track('r5', first)).status).toBe(200);
    expect((await track('r3', second)).status).toBe(200);
    await service.drain();
    // A catalogue article no reader has viewed (on the fresh list): the snapshot carries it for the fresh candidates.
    const now = nowSeconds();
    const store = new DynamoStore();
    const fresh = 'https://pop.example/fresh';
    await store.upsertArticle(clientId, { url: fresh, title: 'Fresh', published: now - 60 }, now);
    await store.addFresh(clientId, [{ guid: articleGuid(fresh), published: now - 60 }], now);
    // The consumer took its turn with the first batch (before the fresh article): the next turn comes a period later.
    // (The rest of the test runs on that clock: the snapshot is dated by it.)
    const shift = (POPULAR_SNAPSHOT_REFRESH_SECONDS + 1) * 1000;
    const realNow = Date.now.bind(Date);
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
    const later = Date.now();
    try {
      expect((await track('r4', second)).status).toBe(200);
      await service.drain();
      const item = (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.popularSnapshot(clientId) }))).Item;
      const snapshot = fromPopularItem(item);
      expect(snapshot?.articles.map((x) => x.guid)).toEqual([articleGuid(first), articleGuid(second)]);
      expect(snapshot?.fresh.map((x) => x.guid)).toEqual([articleGuid(fresh)]);
      expect(snapshot!.at).toBeGreaterThanOrEqual(Math.floor(later / 1000));

      const blockKey = await createBlock(clientId);
      await recos(blockKey, 'reader');
      dropReadCaches();
      commands.length = 0;
      const cold = await recos(blockKey, 'reader');
      expect(guidsOf(cold)).toEqual(expect.arrayContaining([articleGuid(first), articleGuid(second), articleGuid(fresh)]));
      // Block key, context, snapshot: neither the popularity Query nor a read of the fresh article.
      expect(commands.sort()).toEqual(['BatchGetItemCommand', 'GetItemCommand', 'GetItemCommand']);

      // Deleted after the snapshot was taken: a cold container never offers it (the deletion windows), popular or fresh.
      expect(await store.deleteArticle(clientId, articleGuid(first))).toBe(true);
      expect(await store.deleteArticle(clientId, articleGuid(fresh))).toBe(true);
      dropReadCaches();
      expect(guidsOf(await recos(blockKey, 'reader'))).toEqual([articleGuid(second)]);
    } finally {
      clock.mockRestore();
    }
  });

  it('a snapshot older than POPULAR_SNAPSHOT_MAX_AGE_SECONDS, or holding fewer articles than asked while there were more, is not used: the index is queried', async () => {
    const { clientId, a, b, c, blockKey } = await setup();
    const now = nowSeconds();
    const put = (at: number, limit: number, articles: Article[]) => batchWrite([{ PutRequest: { Item: popularItem(clientId, { at, limit, articles, fresh: [] }) } }]);
    const titles = async () => {
      dropReadCaches();
      commands.length = 0;
      const reply = await recos(blockKey, 'reader');
      return { titles: reply.body.result.recommendation.map((r) => r.title), queried: commands.includes('QueryCommand') };
    };
    await put(now, CANDIDATES.popular, [a, b, c].map((x) => ({ ...x, title: `${x.title} (snapshot)` })));
    expect(await titles()).toEqual({ titles: ['A (snapshot)', 'B (snapshot)', 'C (snapshot)'], queried: false });
    await put(now - POPULAR_SNAPSHOT_MAX_AGE_SECONDS - 1, CANDIDATES.popular, [a, b, c].map((x) => ({ ...x, title: `${x.title} (snapshot)` })));
    expect(await titles()).toEqual({ titles: ['A', 'B', 'C'], queried: true });
    // Cut to 2 articles to fit the item size (fitPopular): a request for 200 cannot take it.
    await put(now, 2, [a, b].map((x) => ({ ...x, title: `${x.title} (snapshot)` })));
    expect(await titles()).toEqual({ titles: ['A', 'B', 'C'], queried: true });
  });

  it('one consumer per period writes it, whatever the containers; an item too large loses its fresh articles, then popular ones, and says so by its limit', async () => {
    const { clientId } = await setup();
    const before = calls;
    expect(await new DynamoViewStore().refreshPopular(clientId)).toBe(true);
    const written = calls - before;
    // Another container within the period: its turn is refused (one small conditional write), nothing else is read or written.
    const other = calls;
    expect(await new DynamoViewStore().refreshPopular(clientId)).toBe(false);
    expect(calls - other).toBe(1);
    // The same container within the period does not even try.
    const view = new DynamoViewStore();
    const later = Date.now() + (POPULAR_SNAPSHOT_REFRESH_SECONDS + 1) * 1000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => later);
    try {
      expect(await view.refreshPopular(clientId)).toBe(true);
      const again = calls;
      expect(await view.refreshPopular(clientId)).toBe(false);
      expect(calls - again).toBe(0);
    } finally {
      clock.mockRestore();
    }
    expect(written).toBeGreaterThanOrEqual(3);

    const now = nowSeconds();
    const long = (i: number): Article => ({ ...article(`https://cache.example/long-${i}`, 1, now), desc: 'x'.repeat(2000) });
    const articles = Array.from({ length: 200 }, (_, i) => long(i));
    const fitted = fitPopular({ at: now, limit: 200, articles, fresh: articles.slice(0, 70) });
    expect(fitted.fresh).toEqual([]);
    expect(fitted.articles.length).toBe(fitted.limit);
    expect(fitted.limit).toBeLessThan(200);
    expect(JSON.stringify(popularItem(clientId, fitted)).length).toBeLessThanOrEqual(POPULAR_SNAPSHOT_MAX_BYTES + 1000);
    const small = fitPopular({ at: now, limit: 200, articles: articles.slice(0, 3), fresh: articles.slice(3, 5) });
    expect([small.limit, small.articles.length, small.fresh.length]).toEqual([200, 3, 2]);
  });
});
