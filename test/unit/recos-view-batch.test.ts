import { describe, expect, it } from 'vitest';
import type { PageView } from '../../shared/recos/types.js';
import { MemoryStore } from '../helpers/recos-memory-store.js';
import { trackPageView } from '../helpers/recos-oracle.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { applyViewBatch, groupByArticle, type QueuedView } from '../../shared/recos/view-batch.js';

const NOW = 1_790_000_000;
const CLIENT = 'c1';
const url = (n: number) => `https://news.example/a${n}`;

/** A deterministic mix: 12 readers in sessions over 6 articles, titles that change between views, repeated reads, one article too old for the fresh list. */
function views(): Array<QueuedView & { id: string }> {
  const out: Array<QueuedView & { id: string }> = [];
  let seed = 7;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < 120; i++) {
    const reader = Math.floor(random() * 12);
    const n = Math.floor(random() * 6);
    const view: PageView = {
      userId: `r${reader}`,
      url: url(n),
      title: random() < 0.3 ? `Title ${n} v${i}` : undefined,
      // An article's themes do not change between its views here: a batch reads them once, after its views (docs/architecture.md).
      themes: [`t${n % 3}`, `t${(n + 1) % 3}`],
      published: n === 5 ? NOW - 40 * 86_400 : NOW - 3600 * n,
    };
    out.push({ id: `m${i}`, clientId: CLIENT, view, t: NOW + i * 20 });
  }
  return out;
}

async function oneByOne(list: Array<QueuedView & { id: string }>) {
  const store = new MemoryStore();
  for (const v of list) await trackPageView(store, v.clientId, v.view, v.t);
  return store;
}

const snapshot = (store: MemoryStore) => ({
  articles: [...(store.articleMap.get(CLIENT)?.values() ?? [])].map((a) => ({ ...a, hot: Math.round(a.hot * 1e9) / 1e9 })).sort((a, b) => (a.guid < b.guid ? -1 : 1)),
  readers: [...(store.readerMap.get(CLIENT)?.values() ?? [])].sort((a, b) => (a.userId < b.userId ? -1 : 1)),
  // Co-read weights are sums of fractions (coReadWeight): equal up to the order of the additions.
  covisits: Object.fromEntries(
    [...(store.covisitMap.get(CLIENT) ?? new Map<string, Record<string, number>>())]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([g, counts]) => [g, Object.fromEntries(Object.entries(counts).map(([o, n]) => [o, Math.round(n * 1e9) / 1e9]))]),
  ),
  fresh: [...(store.freshMap.get(CLIENT) ?? [])],
});

describe('applyViewBatch: a batch of queued views', () => {
  it('gives the same articles, readers, co-visits and fresh list as applying the views one by one in time order, whatever the batching', async () => {
    const list = views();
    const expected = snapshot(await oneByOne(list));
    expect(expected.articles.reduce((s, a) => s + a.views, 0)).toBe(120);
    expect(Object.keys(expected.covisits).length).toBeGreaterThan(0);
    for (const size of [1, 7, 40, 120]) {
      const store = new MemoryStore();
      for (let i = 0; i < list.length; i += size) {
        // The consumer gets a batch in any order: it sorts by view time itself.
        const result = await applyViewBatch(store, list.slice(i, i + size).reverse());
        expect(result.failed).toEqual([]);
      }
      expect(snapshot(store), `batches of ${size}`).toEqual(expected);
    }
  });

  it('groups the views of one article into one update: count, every view time, and the latest metadata field by field', () => {
    const groups = groupByArticle([
      { view: { userId: 'a', url: url(1), title: 'First', themes: ['x'] }, t: NOW + 2 },
      { view: { userId: 'b', url: url(1), title: '', image: 'https://news.example/i.jpg' }, t: NOW + 1 },
      { view: { userId: 'c', url: url(2) }, t: NOW },
      { view: { userId: 'd', url: url(1), title: 'Second' }, t: NOW + 3 },
    ]);
    expect(groups.map((g) => [g.guid, g.times])).toEqual([
      [articleGuid(url(2)), [NOW]],
      [articleGuid(url(1)), [NOW + 1, NOW + 2, NOW + 3]],
    ]);
    expect(groups[1].meta).toMatchObject({ url: url(1), title: 'Second', image: 'https://news.example/i.jpg', themes: ['x'] });
  });

  it("drops the views of a deleted article (not counted, not read) and reports the views whose article update failed, applying nothing of them", async () => {
    const store = new MemoryStore();
    await store.upsertArticle(CLIENT, { url: url(1), title: 'Gone' }, NOW);
    await store.deleteArticle(CLIENT, articleGuid(url(1)));
    const failing = Object.assign(store, {
      recordViews: async (clientId: string, groups: Parameters<MemoryStore['recordViews']>[1]) => {
        const out = await MemoryStore.prototype.recordViews.call(store, clientId, groups.filter((g) => g.guid !== articleGuid(url(3))));
        return groups.map((g) => (g.guid === articleGuid(url(3)) ? new Error('throttled') : out.shift()));
      },
    });
    const result = await applyViewBatch(failing, [
      { id: 'a', clientId: CLIENT, view: { userId: 'r', url: url(1) }, t: NOW },
      { id: 'b', clientId: CLIENT, view: { userId: 'r', url: url(2) }, t: NOW + 1 },
      { id: 'c', clientId: CLIENT, view: { userId: 'r', url: url(3) }, t: NOW + 2 },
    ]);
    expect(result).toMatchObject({ failed: ['c'], counted: 1, dropped: 1, articles: 1, readers: 1 });
    expect(store.readerMap.get(CLIENT)!.get('r')!.reads.map((r) => r.g)).toEqual([articleGuid(url(2))]);
    expect(store.articleMap.get(CLIENT)!.has(articleGuid(url(1)))).toBe(false);
  });
});

describe('applyViewBatch: one reader\'s views spread over batches that run at once (SQS delivers in no order)', () => {
  it('keeps every read and loses no co-read pair, as applying the views in time order would', async () => {
    const list = views();
    const expected = snapshot(await oneByOne(list));
    // Deal the views over 5 batches at random (as Lambda's pollers get them) and apply the batches at the same time, several rounds.
    let seed = 3;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const store = new MemoryStore();
    for (let round = 0; round < list.length; round += 40) {
      const batches: Array<Array<QueuedView & { id: string }>> = [[], [], [], [], []];
      for (const v of list.slice(round, round + 40)) batches[Math.floor(random() * 5)].push(v);
      const results = await Promise.all(batches.map((b) => applyViewBatch(store, b)));
      expect(results.flatMap((r) => r.failed)).toEqual([]);
      expect(results.reduce((n, r) => n + r.lostEffects, 0)).toBe(0);
    }
    const got = snapshot(store);
    // Counts are exact (metadata is the last batch's, whichever that was).
    expect(got.articles.map((a) => [a.guid, a.views, a.hot])).toEqual(expected.articles.map((a) => [a.guid, a.views, a.hot]));
    // Every read is kept (the concurrent batches wrote each reader at the version they read, merging again after a conflict).
    expect(got.readers.map((r) => ({ userId: r.userId, reads: r.reads }))).toEqual(expected.readers.map((r) => ({ userId: r.userId, reads: r.reads })));
    // No co-read pair is lost to a concurrent batch. A view applied out of order also pairs with the later reads of its session, and
    // a pair's weight is its distance among the reads known when it is counted: nothing is lost, and the total exceeds time order's by
    // at most 20 % even with this much reordering (12 readers' views dealt over 5 concurrent batches).
    const total = (c: Record<string, Record<string, number>>) => Object.values(c).reduce((n, m) => n + Object.values(m).reduce((a, b) => a + b, 0), 0);
    for (const [from, counts] of Object.entries(expected.covisits as Record<string, Record<string, number>>)) {
      for (const [to, n] of Object.entries(counts)) expect(got.covisits[from]?.[to] ?? 0, `${from} → ${to}`).toBeGreaterThanOrEqual(n * 0.5);
    }
    expect(total(got.covisits) / total(expected.covisits)).toBeGreaterThanOrEqual(1);
    expect(total(got.covisits) / total(expected.covisits)).toBeLessThanOrEqual(1.2);
  });

  it('a reader whose item another batch wrote meanwhile is read and merged again, not overwritten', async () => {
    const store = new MemoryStore();
    const view = (n: number, t: number, id: string): QueuedView & { id: string } => ({ id, clientId: CLIENT, t, view: { userId: 'r1', url: url(n), themes: ['x'] } });
    // The later view's batch lands first; the earlier one then merges into it (out of order).
    await applyViewBatch(store, [view(2, NOW + 60, 'b')]);
    await applyViewBatch(store, [view(1, NOW, 'a')]);
    const reader = store.readerMap.get(CLIENT)!.get('r1')!;
    expect(reader.reads.map((r) => r.g)).toEqual([articleGuid(url(2)), articleGuid(url(1))]);
    expect(store.covisitMap.get(CLIENT)!.get(articleGuid(url(1)))).toEqual({ [articleGuid(url(2))]: 1 });
    expect(store.covisitMap.get(CLIENT)!.get(articleGuid(url(2)))).toEqual({ [articleGuid(url(1))]: 1 });
  });
});

describe('applyViewBatch: a batch that runs out of time, then is delivered again (SQS redelivers its failed views)', () => {
  /** 250 views of 250 articles (three article chunks); a clock that moves 10 ms per look. */
  const burst = () => Array.from({ length: 250 }, (_, i) => ({ id: `v${i}`, clientId: CLIENT, view: { userId: `r${i % 50}`, url: url(i) }, t: NOW + i }));
  const ticking = () => {
    let ms = 0;
    return () => (ms += 10);
  };

  it('starts no article update after articlesBy: those views are failed (deferred), nothing of them applied, and their redelivery counts every view exactly once', async () => {
    const store = new MemoryStore();
    const list = burst();
    // The first chunk starts in time, the next ones do not.
    const first = await applyViewBatch(store, list, { now: ticking(), articlesBy: 15, effectsBy: 1_000_000 });
    expect(first.counted).toBe(100);
    expect(first.deferred).toBe(150);
    expect(first.failed).toHaveLength(150);
    const applied = [...store.articleMap.get(CLIENT)!.values()];
    expect(applied.reduce((s, a) => s + a.views, 0)).toBe(100);
    const failed = new Set(first.failed);
    const again = await applyViewBatch(store, list.filter((v) => failed.has(v.id)));
    expect(again.failed).toEqual([]);
    const articles = [...store.articleMap.get(CLIENT)!.values()];
    expect(articles).toHaveLength(250);
    expect(articles.every((a) => a.views === 1)).toBe(true);
    // Each reader's reads, across both deliveries, are on its item once.
    const reads = [...store.readerMap.get(CLIENT)!.values()].reduce((s, r) => s + r.reads.length, 0);
    expect(reads).toBe(250);
  });

  it('writes no reader, co-visit or fresh entry after effectsBy: the views stay counted (not failed, so never counted twice), the skipped writes counted as lost', async () => {
    const store = new MemoryStore();
    const result = await applyViewBatch(store, burst(), { now: ticking(), articlesBy: 1_000_000, effectsBy: 0 });
    expect(result).toMatchObject({ failed: [], counted: 250, readers: 0 });
    expect(result.lostEffects).toBeGreaterThan(0);
    expect(store.readerMap.get(CLIENT)?.size ?? 0).toBe(0);
  });

  it('stops writing readers once effectsBy has passed, between writes of 100: those written keep their reads, the rest are counted as lost', async () => {
    const store = new MemoryStore();
    let ms = 0;
    // Each write of readers takes 100 ms on this clock.
    const slow = Object.assign(store, {
      putReaders: async (clientId: string, writes: Parameters<MemoryStore['putReaders']>[1]) => {
        const out = await MemoryStore.prototype.putReaders.call(store, clientId, writes);
        ms += 100;
        return out;
      },
    });
    const list = Array.from({ length: 250 }, (_, i) => ({ id: `v${i}`, clientId: CLIENT, view: { userId: `reader${i}`, url: url(i % 7) }, t: NOW + i }));
    const result = await applyViewBatch(slow, list, { now: () => ms, articlesBy: 1_000_000, effectsBy: 150 });
    expect(result).toMatchObject({ failed: [], counted: 250, readers: 200, lostEffects: 50 });
    expect(store.readerMap.get(CLIENT)!.size).toBe(200);
  });

  it('a failed read of the readers loses their reads (counted) instead of failing the batch: its counted views are never delivered again (regression: the throw failed the whole batch)', async () => {
    const store = new MemoryStore();
    const failing = Object.assign(store, {
      readers: () => Promise.reject(new Error('ProvisionedThroughputExceededException')),
    });
    const result = await applyViewBatch(failing, burst());
    expect(result).toMatchObject({ failed: [], counted: 250, readers: 0, lostEffects: 50 });
  });
});
