import { describe, expect, it } from 'vitest';
import { buildLibrary, generatedModule } from '../../shared/browser/build.js';
import { readFileSync } from 'node:fs';
import { jsonp, redirectUrl } from '../../shared/recos/envelope.js';
import { addView, algoName, popularityFactor, POPULARITY_CONCENTRATION_CAP, recentShare, TASTE_RECENCY_FLOOR, bucketsFromScore, scoreFromBuckets, viewIncrement, contentSimilarity, decayedViews, freshness, POPULARITY_HALF_LIFE_HOURS, preferenceMatch, rank, shuffled, type RankInput } from '../../shared/recos/ranking.js';
import { blockSettings, DEFAULT_WEIGHTS, MAX_FRESHNESS_HOURS } from '../../shared/recos/settings.js';
import { FRESH_LIST_CAP, pruneCovisits, pruneFresh } from '../../shared/recos/limits.js';
import { MemoryStore } from '../helpers/recos-memory-store.js';
import { trackPageView } from '../helpers/recos-oracle.js';
import { rankingFor } from '../../shared/recos/recommend.js';
import { LIMITS } from '../../shared/recos/limits.js';
import { mergeArticle, mergeReader } from '../../shared/recos/tracking.js';
import { toUnixSeconds } from '../../shared/recos/schemas.js';
import type { Article } from '../../shared/recos/types.js';
import { articleGuid, canonicalUrl } from '../../shared/recos/urls.js';

const NOW = 1_790_000_000;
const HOUR = 3600;

function article(guid: string, o: Partial<Article> & { viewsAt?: number[] } = {}): Article {
  const viewsAt = o.viewsAt ?? [NOW - HOUR];
  let hot: number | undefined;
  for (const t of viewsAt) hot = addView(hot, t);
  return {
    guid,
    url: `https://site.example/${guid}`,
    title: guid,
    desc: '',
    image: '',
    category: '',
    themes: [],
    published: NOW - 2 * HOUR,
    firstSeen: NOW - 2 * HOUR,
    lastSeen: NOW,
    views: viewsAt.length,
    clicks: 0,
    hot: hot ?? 0,
    ...o,
  };
}

function input(candidates: Article[], o: Partial<RankInput> = {}): RankInput {
  return {
    candidates,
    covisits: {},
    read: new Set(),
    tastes: {},
    preferences: [],
    excluded: new Set(),
    settings: { weights: DEFAULT_WEIGHTS, maxAgeDays: 30, freshnessHours: 0, maxRows: 50, siteHosts: ['site.example'] },
    now: NOW,
    ...o,
  };
}

const order = (ranked: { article: Article }[]) => ranked.map((r) => r.article.guid);

describe('decayed popularity', () => {
  it('halves a view every half-life and keeps the order of decayed counts at any time', () => {
    const one = addView(undefined, NOW);
    expect(decayedViews(one, NOW)).toBeCloseTo(1, 9);
    expect(decayedViews(one, NOW + POPULARITY_HALF_LIFE_HOURS * HOUR)).toBeCloseTo(0.5, 9);
    // Three old views vs one fresh view: the fresh one wins once the old ones are two half-lives older.
    let old: number | undefined;
    for (let i = 0; i < 3; i++) old = addView(old, NOW - 2 * POPULARITY_HALF_LIFE_HOURS * HOUR);
    expect(decayedViews(old!, NOW)).toBeCloseTo(0.75, 9);
    expect(one).toBeGreaterThan(old!);
  });

  it('gives the same score from bucket masses that storage adds to (no read before write) as from adding views one by one', () => {
    const times = [NOW - 500 * 86_400, NOW - 3 * HOUR, NOW - HOUR, NOW];
    const masses: Record<number, number> = {};
    let score: number | undefined;
    for (const t of times) {
      const { bucket, amount } = viewIncrement(t);
      expect(amount).toBeGreaterThanOrEqual(1);
      expect(amount).toBeLessThanOrEqual(2 ** 16);
      masses[bucket] = (masses[bucket] ?? 0) + amount;
      score = addView(score, t);
    }
    expect(Object.keys(masses).length).toBeGreaterThan(1);
    expect(scoreFromBuckets(masses)).toBeCloseTo(score!, 9);
    expect(scoreFromBuckets(bucketsFromScore(score!))).toBeCloseTo(score!, 9);
    expect(scoreFromBuckets({})).toBeUndefined();
  });
});

describe('rank', () => {
  it('orders by decayed popularity alone for a cold start, named "popularity"', () => {
    const ranked = rank(input([article('a', { viewsAt: [NOW - HOUR] }), article('b', { viewsAt: [NOW - HOUR, NOW - 2 * HOUR] })]));
    expect(order(ranked)).toEqual(['b', 'a']);
    expect(algoName(ranked)).toBe('popularity');
  });

  it('never returns the current page, read articles, excluded ones, stale ones or other hosts', () => {
    const candidates = ['cur', 'read', 'excl', 'ok'].map((g) => article(g));
    candidates.push(article('stale', { published: NOW - 31 * 86_400 }));
    candidates.push(article('foreign', { url: 'https://other.example/x' }));
    const ranked = rank(input(candidates, { currentGuid: 'cur', read: new Set(['read']), excluded: new Set(['excl']), settings: { weights: DEFAULT_WEIGHTS, maxAgeDays: 30, freshnessHours: 0, maxRows: 50, siteHosts: ['site.example', 'other.example'], hosts: ['site.example'] } }));
    expect(order(ranked)).toEqual(['ok']);
  });

  it('puts co-visited articles ahead of more popular ones', () => {
    const popular = article('popular', { viewsAt: Array.from({ length: 50 }, () => NOW - HOUR) });
    const coRead = article('co-read');
    const ranked = rank(input([popular, coRead], { currentGuid: 'cur', covisits: { 'co-read': 3 } }));
    expect(order(ranked)).toEqual(['co-read', 'popular']);
    expect(algoName(ranked)).toBe('covisit+popularity');
  });

  it('uses content similarity (themes, category) with the current page', () => {
    const current = article('cur', { themes: ['climate', 'cities'], category: 'Science' });
    const similar = article('similar', { themes: ['climate'], category: 'Science' });
    const popular = article('popular', { themes: ['football'], viewsAt: [NOW - HOUR, NOW - HOUR, NOW - HOUR] });
    expect(contentSimilarity(similar, current)).toBeCloseTo((2 * 0.5 + 1) / 3, 9);
    expect(contentSimilarity(popular, current)).toBe(0);
    expect(order(rank(input([popular, similar], { current, currentGuid: 'cur' })))).toEqual(['similar', 'popular']);
  });

  it('uses explicit preferences over implicit tastes, and both over popularity', () => {
    const football = article('football', { themes: ['football'], viewsAt: Array.from({ length: 20 }, () => NOW - HOUR) });
    const cooking = article('cooking', { themes: ['cooking'] });
    const climate = article('climate', { themes: ['climate'] });
    expect(preferenceMatch(cooking, { climate: 4 }, new Set(['cooking']))).toBe(1);
    expect(preferenceMatch(climate, { climate: 4, cooking: 2 }, new Set())).toBeCloseTo(0.6, 9);
    expect(order(rank(input([football, cooking, climate])))).toEqual(['football', 'climate', 'cooking']);
    expect(order(rank(input([football, cooking, climate], { tastes: { climate: 2 } })))).toEqual(['climate', 'football', 'cooking']);
    const both = rank(input([football, cooking, climate], { tastes: { climate: 2 }, preferences: ['cooking'] }));
    expect(order(both)).toEqual(['cooking', 'climate', 'football']);
    expect(algoName(both)).toBe('preferences+popularity');
  });

  it('follows the block weights: popularity 0 and covisit 0 leave only what is switched on', () => {
    const a = article('a', { viewsAt: [NOW - HOUR, NOW - HOUR] });
    const b = article('b');
    const weights = { covisit: 0, content: 0, preferences: 0, popularity: 0, freshness: 0 };
    const ranked = rank(input([b, a], { covisits: { b: 5 }, settings: { weights, maxAgeDays: 30, freshnessHours: 48, maxRows: 50, siteHosts: ['site.example'] } }));
    expect(algoName(ranked)).toBe('none');
    // Equal scores: the more popular first, then the guid — a stable order.
    expect(order(ranked)).toEqual(['a', 'b']);
  });

  it('caps the ranking at maxRows and deduplicates candidates', () => {
    const many = Array.from({ length: 10 }, (_, i) => article(`a${i}`));
    expect(rank(input([...many, ...many], { settings: { weights: DEFAULT_WEIGHTS, maxAgeDays: 30, freshnessHours: 0, maxRows: 4, siteHosts: ['site.example'] } }))).toHaveLength(4);
  });

  it('recommends a fresh catalogue article before its first view, decaying, and no longer once older than the freshness window', () => {
    const window = 48;
    const settings = { weights: DEFAULT_WEIGHTS, maxAgeDays: 30, freshnessHours: window, maxRows: 50, siteHosts: ['site.example'] };
    const popular = article('popular', { published: NOW - 5 * 86_400, viewsAt: Array.from({ length: 10 }, () => NOW - HOUR) });
    const old = article('old', { published: NOW - 5 * 86_400, viewsAt: [NOW - HOUR] });
    // Known from the catalogue only: no views (hot −∞ ⇒ no popularity), just published.
    const fresh = article('fresh', { published: NOW - HOUR, viewsAt: [], views: 0, hot: -Infinity });
    expect(freshness(NOW, NOW, window)).toBe(1);
    expect(freshness(NOW - 24 * HOUR, NOW, window)).toBeCloseTo(0.5, 9);
    expect(freshness(NOW - 12 * HOUR, NOW, window)).toBeGreaterThan(freshness(NOW - 36 * HOUR, NOW, window));
    expect(freshness(NOW - window * HOUR, NOW, window)).toBe(0);
    expect(freshness(NOW - HOUR, NOW, 0)).toBe(0);
    const now = rank(input([popular, old, fresh], { settings }));
    expect(order(now)).toEqual(['popular', 'fresh', 'old']);
    expect(now[1].signals.popularity).toBe(0);
    expect(now[1].signals.freshness).toBeCloseTo(DEFAULT_WEIGHTS.freshness * (1 - 1 / window), 9);
    expect(algoName(now)).toBe('popularity+freshness');
    // Once older than the window, an article no reader viewed is not recommended at all; the page's algo no longer names freshness.
    const later = rank(input([popular, old, fresh], { settings, now: NOW + window * HOUR }));
    expect(order(later)).toEqual(['popular', 'old']);
    expect(algoName(later)).toBe('popularity');
    // Weighted per block: a weight of 0 switches it off.
    const off = rank(input([popular, old, fresh], { settings: { ...settings, weights: { ...DEFAULT_WEIGHTS, freshness: 0 } } }));
    expect(order(off)).toEqual(['popular', 'old', 'fresh']);
  });

  it('through the store: a catalogue article on the fresh list is a candidate before its first view, and not once past the window', async () => {
    const store = new MemoryStore();
    const settings = { ...blockSettings({ kind: 'block', clientId: 'c', freshnessHours: 6 }, { siteHosts: ['s.example'] }) };
    const { article } = (await store.upsertArticle('c', { url: 'https://s.example/new', title: 'New', published: NOW - HOUR }, NOW))!;
    await store.addFresh('c', [{ guid: article.guid, published: article.published }], NOW);
    const ranking = async (now: number) => (await rankingFor(store, settings, { clientId: 'c', userId: 'u', excluded: [], now })).map((r) => r.article.guid);
    expect(await ranking(NOW)).toEqual([article.guid]);
    expect(await ranking(NOW + 5 * HOUR - 1)).toEqual([article.guid]);
    expect(await ranking(NOW + 5 * HOUR)).toEqual([]);
    // Deleted: off the fresh list, never a candidate again (a later view is not counted).
    await store.deleteArticle('c', article.guid);
    expect(await ranking(NOW)).toEqual([]);
    expect(await store.recordView('c', { userId: 'u', url: 'https://s.example/new' }, NOW)).toBeUndefined();
  });

  it('through tracking: an article first seen by a page view goes on the fresh list once; an old one does not', async () => {
    const store = new MemoryStore();
    const fresh = (await store.context('c', { fresh: true })).fresh ?? [];
    expect(fresh).toEqual([]);
    await trackPageView(store, 'c', { userId: 'u1', url: 'https://s.example/new', published: NOW - HOUR }, NOW);
    await trackPageView(store, 'c', { userId: 'u2', url: 'https://s.example/old', published: NOW - (MAX_FRESHNESS_HOURS + 1) * HOUR }, NOW);
    const guid = articleGuid('https://s.example/new');
    expect((await store.context('c', { fresh: true })).fresh).toEqual([{ guid, published: NOW - HOUR }]);
    // Not a page without a publication time (its first view would date it), nor one dated more than an hour ahead.
    await trackPageView(store, 'c', { userId: 'u4', url: 'https://s.example/undated' }, NOW);
    await trackPageView(store, 'c', { userId: 'u5', url: 'https://s.example/year-9999', published: 253_402_300_799 }, NOW);
    expect((await store.context('c', { fresh: true })).fresh).toEqual([{ guid, published: NOW - HOUR }]);
    // Later views do not write it again: after a deletion of the entry, a second view leaves the list as it is.
    store.freshMap.set('c', []);
    await trackPageView(store, 'c', { userId: 'u3', url: 'https://s.example/new' }, NOW + 60);
    expect((await store.context('c', { fresh: true })).fresh).toEqual([]);
  });

  it('keeps the newest FRESH_LIST_CAP entries of the fresh list, none older than the longest window', () => {
    const entries = Array.from({ length: FRESH_LIST_CAP + 10 }, (_, i) => ({ guid: `g${i}`, published: NOW - i * 60 }));
    const old = { guid: 'old', published: NOW - (MAX_FRESHNESS_HOURS + 1) * HOUR };
    const kept = pruneFresh([old, ...entries, entries[0]], NOW);
    expect(kept).toHaveLength(FRESH_LIST_CAP);
    expect(kept[0]).toEqual(entries[0]);
    expect(kept.at(-1)).toEqual(entries[FRESH_LIST_CAP - 1]);
    expect(kept.some((e) => e.guid === 'old')).toBe(false);
    // Entries dated more than an hour ahead go too: they would sort first and never leave (tracking takes any published_time).
    const ahead = Array.from({ length: FRESH_LIST_CAP }, (_, i) => ({ guid: `future${i}`, published: NOW + 2 * HOUR + i }));
    const soon = { guid: 'in-an-hour', published: NOW + HOUR };
    expect(pruneFresh([...ahead, soon, entries[0]], NOW)).toEqual([soon, entries[0]]);
  });

  it('shuffles a copy, keeping the items', () => {
    const items = [1, 2, 3, 4, 5];
    const out = shuffled(items, () => 0);
    expect(out).toEqual([2, 3, 4, 5, 1]);
    expect(items).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('tracking rules', () => {
  const view = (url: string, o = {}) => ({ userId: 'u', url, ...o });

  it('keeps the latest metadata, the first publication time it got, and counts views', () => {
    const first = mergeArticle(undefined, view('https://s.example/a', { title: 'T1', themes: ['x'], published: 100 }), NOW);
    const second = mergeArticle(first, view('https://s.example/a', { title: 'T2' }), NOW + 10);
    expect(second).toMatchObject({ title: 'T2', themes: ['x'], published: 100, views: 2, firstSeen: NOW, lastSeen: NOW + 10 });
    expect(second.guid).toBe(articleGuid('https://s.example/a'));
    expect(mergeArticle(undefined, view('https://s.example/b'), NOW).published).toBe(NOW);
  });

  it('co-counts a new read with the earlier reads of the same session only, at most sessionPairs of them', () => {
    const a = (g: string) => article(g);
    let reader = mergeReader(undefined, 'u', a('r1'), NOW).reader;
    reader = mergeReader(reader, 'u', a('r2'), NOW + 60).reader;
    const third = mergeReader(reader, 'u', a('r3'), NOW + 120);
    expect(third.session).toEqual(['r2', 'r1']);
    const later = mergeReader(third.reader, 'u', a('r4'), NOW + 120 + LIMITS.sessionGapSeconds + 1);
    expect(later.session).toEqual([]);
    const again = mergeReader(third.reader, 'u', a('r1'), NOW + 180);
    expect(again.session).toEqual([]);
    expect(again.reader.reads.map((r) => r.g)).toEqual(['r1', 'r3', 'r2']);
    let long = third.reader;
    for (let i = 0; i < 10; i++) long = mergeReader(long, 'u', a(`s${i}`), NOW + 200 + i).reader;
    expect(mergeReader(long, 'u', a('z'), NOW + 300).session).toHaveLength(LIMITS.sessionPairs);
  });

  it('bounds a reader: at most readsPerReader reads and tastesPerReader themes', () => {
    let reader = undefined as ReturnType<typeof mergeReader>['reader'] | undefined;
    for (let i = 0; i < LIMITS.readsPerReader + 20; i++) reader = mergeReader(reader, 'u', article(`g${i}`, { themes: [`t${i}`] }), NOW + i).reader;
    expect(reader!.reads).toHaveLength(LIMITS.readsPerReader);
    expect(reader!.reads[0].g).toBe(`g${LIMITS.readsPerReader + 19}`);
    expect(Object.keys(reader!.tastes)).toHaveLength(LIMITS.tastesPerReader);
    expect(reader!.tastes[`t${LIMITS.readsPerReader + 19}`]).toBe(1);
  });

  it('records co-visits in both directions through a store, and prunes co-visit items to the strongest', async () => {
    const store = new MemoryStore();
    await trackPageView(store, 'c', view('https://s.example/a'), NOW);
    await trackPageView(store, 'c', view('https://s.example/b'), NOW + 10);
    const [ga, gb] = ['https://s.example/a', 'https://s.example/b'].map(articleGuid);
    expect((await store.context('c', { guid: ga, covisits: true })).covisits).toEqual({ [gb]: 1 });
    expect((await store.context('c', { guid: gb, covisits: true })).covisits).toEqual({ [ga]: 1 });
    const counts = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`g${String(i).padStart(3, '0')}`, i % 7]));
    const pruned = pruneCovisits(counts, 10);
    expect(Object.keys(pruned)).toHaveLength(10);
    expect(Math.min(...Object.values(pruned))).toBe(6);
  });
});

describe('co-reads and seeds (the realistic news log)', () => {
  it("scales a co-read by the candidate's recent share of readers: last week's story gives way to today's", () => {
    const DAY = 24 * HOUR;
    const stale = article('stale', { viewsAt: Array.from({ length: 20 }, () => NOW - 7 * DAY) });
    const today = article('today', { viewsAt: Array.from({ length: 20 }, () => NOW - HOUR) });
    expect(recentShare(stale, NOW)).toBeCloseTo(2 ** -3.5, 5);
    expect(recentShare(today, NOW)).toBeCloseTo(2 ** (-1 / 48), 5);
    expect(recentShare(article('unseen', { viewsAt: [], views: 0 }), NOW)).toBe(1);
    const weights = { ...DEFAULT_WEIGHTS, popularity: 0, freshness: 0 };
    const ranked = rank(input([stale, today], { currentGuid: 'cur', covisits: { stale: 5, today: 5 }, settings: { ...input([]).settings, weights } }));
    expect(order(ranked)).toEqual(['today', 'stale']);
    expect(ranked[0].signals.covisit).toBeGreaterThan(ranked[1].signals.covisit);
  });

  it("scales content similarity and the reader's themes the same way: among articles like the page, today's first", () => {
    const DAY = 24 * HOUR;
    const current = article('cur', { themes: ['climate'], category: 'Science' });
    // Equal on content and themes; the stale one has more views in all, the fresh one more of its readers now.
    const stale = article('stale', { themes: ['climate'], category: 'Science', viewsAt: Array.from({ length: 40 }, () => NOW - 7 * DAY) });
    const today = article('today', { themes: ['climate'], category: 'Science', viewsAt: Array.from({ length: 2 }, () => NOW - HOUR) });
    const unseen = article('unseen', { themes: ['climate'], category: 'Science', viewsAt: [], views: 0 });
    const weights = { ...DEFAULT_WEIGHTS, covisit: 0, popularity: 0, freshness: 0 };
    const ranked = rank(input([stale, today, unseen], { current, currentGuid: 'cur', tastes: { climate: 2 }, settings: { ...input([]).settings, weights, freshnessHours: 48 } }));
    const by = new Map(ranked.map((r) => [r.article.guid, r.signals]));
    // The stale one's share (2^-3.5 ≈ 0.09) is under the floor: a quarter of the match stays.
    expect(recentShare(stale, NOW)).toBeLessThan(TASTE_RECENCY_FLOOR);
    expect(by.get('stale')!.content).toBeCloseTo(by.get('unseen')!.content * TASTE_RECENCY_FLOOR, 9);
    expect(by.get('stale')!.preferences).toBeCloseTo(by.get('unseen')!.preferences * TASTE_RECENCY_FLOOR, 9);
    expect(by.get('today')!.content).toBeCloseTo(by.get('unseen')!.content * recentShare(today, NOW), 9);
    expect(by.get('today')!.content).toBeGreaterThan(by.get('stale')!.content);
    // An article nobody read yet is not held back (recentShare 1): a new story competes on content before its first view.
    expect(order(ranked)).toEqual(['unseen', 'today', 'stale']);
  });

  it("weighs popularity by how concentrated readers' attention is, and keeps the block's weight among few candidates", () => {
    expect(popularityFactor(Array.from({ length: 200 }, () => 1))).toBe(1);
    // Ten stories take 1,000 of 1,190 decayed views: the cap.
    expect(popularityFactor([...Array.from({ length: 10 }, () => 100), ...Array.from({ length: 190 }, () => 1)])).toBe(POPULARITY_CONCENTRATION_CAP);
    // The ten take 20 % of 100 candidates' views: twice the reference share.
    expect(popularityFactor([...Array.from({ length: 10 }, () => 2.25), ...Array.from({ length: 90 }, () => 1)])).toBeCloseTo(2, 5);
    expect(popularityFactor([100, 1, 1])).toBe(1);
    expect(popularityFactor([])).toBe(1);
  });

  it('weights a co-read by how close in the session the two reads are', () => {
    const a = (guid: string) => article(guid);
    let reader = mergeReader(undefined, 'u', a('r1'), NOW).reader;
    reader = mergeReader(reader, 'u', a('r2'), NOW + 60).reader;
    reader = mergeReader(reader, 'u', a('r3'), NOW + 120).reader;
    const fourth = mergeReader(reader, 'u', a('r4'), NOW + 180);
    expect(fourth.session).toEqual(['r3', 'r2', 'r1']);
    expect(fourth.weights).toEqual([1, 1 / 2, 1 / 3]);
  });

  it('gives no freshness to an article whose publication time nobody gave (first seen at install)', () => {
    const undated = article('undated', { published: NOW - HOUR, dated: false });
    const dated = article('dated', { published: NOW - HOUR });
    const ranked = rank(input([undated, dated], { settings: { ...input([]).settings, weights: { covisit: 0, content: 0, preferences: 0, popularity: 0, freshness: 1 }, freshnessHours: 48 } }));
    expect(ranked.find((r) => r.article.guid === 'undated')!.signals.freshness).toBe(0);
    expect(ranked.find((r) => r.article.guid === 'dated')!.signals.freshness).toBeGreaterThan(0.9);
  });

  it("seeds the co-read signal with the reader's previous reads: their co-reads rank where the current page has none", async () => {
    const store = new MemoryStore();
    const C = 'c';
    const url = (n: string) => `https://site.example/${n}`;
    const track = (user: string, n: string, t: number) => trackPageView(store, C, { userId: user, url: url(n) }, t);
    // Others read "prev" then "next"; the reader read "prev", then "page", which nobody else read.
    for (let i = 0; i < 3; i++) {
      await track(`o${i}`, 'prev', NOW - 600);
      await track(`o${i}`, 'next', NOW - 590);
    }
    for (let i = 0; i < 5; i++) await track(`p${i}`, `popular`, NOW - 500);
    await track('reader', 'prev', NOW - 120);
    await track('reader', 'page', NOW - 60);
    const settings = { ...blockSettings({ clientId: C, kind: 'block' } as never, { id: C, siteHosts: ['site.example'] } as never), rows: 10 };
    const ranking = await rankingFor(store, settings, { clientId: C, userId: 'reader', pageUrl: url('page'), excluded: [], now: NOW });
    expect(ranking[0].article.url).toBe(url('next'));
    expect(ranking[0].signals.covisit).toBeGreaterThan(0);
  });
});

describe('URLs, times, envelopes and the library build', () => {
  it('canonicalises article URLs and refuses non-http ones', () => {
    expect(canonicalUrl('HTTPS://News.Example:443/a?utm_source=n&id=3&fbclid=x#c')).toBe('https://news.example/a?id=3');
    expect(canonicalUrl('javascript:alert(1)')).toBeUndefined();
    expect(canonicalUrl('https://user:pw@news.example/')).toBeUndefined();
    expect(canonicalUrl('/relative')).toBeUndefined();
  });

  it('reads published_time as Unix seconds from seconds, milliseconds, numeric strings and ISO dates', () => {
    expect(toUnixSeconds(1_700_000_000)).toBe(1_700_000_000);
    expect(toUnixSeconds(1_700_000_000_123)).toBe(1_700_000_000);
    expect(toUnixSeconds('1700000000')).toBe(1_700_000_000);
    expect(toUnixSeconds('2023-11-14T22:13:20Z')).toBe(1_700_000_000);
    expect(toUnixSeconds('soon')).toBeUndefined();
  });

  it('builds redirection URLs and JSONP bodies', () => {
    expect(redirectUrl({ baseUrl: 'http://api.example', blockKey: 'k/1', redirHttps: true }, 'abc')).toBe('https://api.example/v1/r/k%2F1/abc?https=1');
    // The rid is signed for the block and article (shared/recos/recomm-ids.ts): none without the client's secret.
    expect(redirectUrl({ baseUrl: 'http://api.example', blockKey: 'k', redirHttps: true, recommId: 'B.abcdefghijklmnop', secret: 's' }, 'abc')).toMatch(/^https:\/\/api\.example\/v1\/r\/k\/abc\?rid=B\.abcdefghijklmnop\.[A-Za-z0-9_-]{16}&https=1$/);
    expect(redirectUrl({ baseUrl: 'http://api.example', blockKey: 'k', redirHttps: false, recommId: 'default.abcdefghijklmnop' }, 'abc')).toBe('http://api.example/v1/r/k/abc');
    expect(jsonp('a.b', { t: 'x\u2028y' })).toBe('/**/a.b({"t":"x\\u2028y"});');
  });

  it('applies block defaults and ignores invalid settings', () => {
    const s = blockSettings({ kind: 'block', clientId: 'c', rows: 'many', maxRows: 20, weights: { covisit: -1, popularity: 2 }, envelope: 'legacy', hosts: ['News.example'] }, { siteHosts: ['news.example'] });
    expect(s).toMatchObject({ rows: 10, maxRows: 20, envelope: 'legacy', hosts: ['news.example'], siteHosts: ['news.example'], weights: { ...DEFAULT_WEIGHTS, popularity: 2 } });
  });

  it('serves the library the current source builds (run `npm run build:lib` after editing it)', async () => {
    expect(readFileSync('shared/browser/library.generated.ts', 'utf8')).toBe(generatedModule(await buildLibrary()));
  });
});
