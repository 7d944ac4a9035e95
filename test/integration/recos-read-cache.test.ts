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

const service = useService();
let calls = 0;
ddb.middlewareStack.add((next) => async (input) => {
  calls++;
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
    // The block key, then the context BatchGetItem (with the client) and the popularity Query in parallel.
    expect(calls - before).toBe(3);
    before = calls;
    const warm = await request(url);
    expect(warm.body).toEqual(cold.body);
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
