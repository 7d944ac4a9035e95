/**
 * The container's short-lived copies of the popular list and of candidate
 * articles (shared/recos/read-cache.ts) against DynamoDB Local: a copy may
 * predate a deletion, and the ranking still never offers the deleted article;
 * a revived (PUT again) article is offered at once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBlock, createClient, getClient, resolvePublicKey } from '../../shared/clients/clients.js';
import { batchWrite, ddb } from '../../shared/db/client.js';
import { DynamoStore, recosItems } from '../../shared/recos/dynamo-store.js';
import { addView } from '../../shared/recos/ranking.js';
import { rankingFor } from '../../shared/recos/recommend.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { blockSettings } from '../../shared/recos/settings.js';
import type { Article } from '../../shared/recos/types.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { request, useService } from '../helpers/service.js';

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
    const cold = await request(url);
    expect(cold.status, cold.text).toBe(200);
    expect(cold.body.result.recommendation.map((r: { guid: string }) => r.guid)).toEqual([a.guid, b.guid, c.guid]);
    // The block key, then the context BatchGetItem (with the client) and the popularity Query in parallel.
    expect(calls - before).toBe(3);
    before = calls;
    const warm = await request(url);
    expect(warm.body).toEqual(cold.body);
    expect(calls - before).toBe(1);
  });
});
