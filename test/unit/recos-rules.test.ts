/**
 * Editorial rules (pins, block exclusions) and reasons of the ranking
 * (shared/recos/ranking.ts, recommend.ts) on plain values and the in-memory
 * store.
 */
import { describe, expect, it } from 'vitest';
import { addView, rank, reasonOf, type RankInput, type Ranked } from '../../shared/recos/ranking.js';
import { rankingFor } from '../../shared/recos/recommend.js';
import { blockSettings, DEFAULT_WEIGHTS } from '../../shared/recos/settings.js';
import type { Article, Pin } from '../../shared/recos/types.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { MemoryStore } from '../helpers/recos-memory-store.js';
import { trackPageView } from '../helpers/recos-oracle.js';

const NOW = 1_790_000_000;
const HOUR = 3600;

function article(guid: string, o: Partial<Article> & { viewsAt?: number[] } = {}): Article {
  const viewsAt = o.viewsAt ?? [NOW - HOUR];
  let hot: number | undefined;
  for (const t of viewsAt) hot = addView(hot, t);
  return { guid, url: `https://site.example/${guid}`, title: `Title ${guid}`, desc: '', image: '', category: '', themes: [], published: NOW - 2 * HOUR, firstSeen: NOW - 2 * HOUR, lastSeen: NOW, views: viewsAt.length, clicks: 0, hot: hot ?? 0, ...o };
}

/** Articles a..f, a the most viewed, f the least. */
const site = ['a', 'b', 'c', 'd', 'e', 'f'].map((g, i) => article(g, { viewsAt: Array.from({ length: 12 - 2 * i }, (_, k) => NOW - HOUR - k) }));
const pin = (guid: string, position: number, until?: number): Pin => ({ url: `https://site.example/${guid}`, guid, position, ...(until ? { until } : {}) });

function input(o: Partial<RankInput> & { pins?: Pin[]; exclude?: { guids: string[]; categories: string[] } } = {}): RankInput {
  const { pins = [], exclude = { guids: [], categories: [] }, ...rest } = o;
  return {
    candidates: site,
    covisits: {},
    read: new Set(),
    tastes: {},
    preferences: [],
    excluded: new Set(),
    settings: { weights: DEFAULT_WEIGHTS, maxAgeDays: 30, freshnessHours: 0, maxRows: 50, siteHosts: ['site.example'], pins, exclude },
    now: NOW,
    ...rest,
  };
}

const order = (ranked: Ranked[]) => ranked.map((r) => r.article.guid);

describe('editorial pins', () => {
  it('places a pinned article at its position for every reader, even one who read it, until `until`', () => {
    expect(order(rank(input()))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    const f = site[5];
    const pinned = rank(input({ pins: [pin('f', 2), pin('e', 1)], pinned: [f, site[4]], read: new Set(['f']) }));
    expect(order(pinned)).toEqual(['e', 'f', 'a', 'b', 'c', 'd']);
    expect(pinned.slice(0, 2).every((r) => r.pinned && r.reason?.type === 'pinned')).toBe(true);
    // A pin past the end of a short ranking comes last; the ranking keeps maxRows entries.
    const short = rank({ ...input({ pins: [pin('f', 40)], pinned: [f] }), settings: { ...input().settings, maxRows: 4, pins: [pin('f', 4)] } });
    expect(order(short)).toEqual(['a', 'b', 'c', 'f']);
    // Expired: ranked by its score again.
    expect(order(rank(input({ pins: [pin('f', 1, NOW)], pinned: [f] })))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(order(rank(input({ pins: [pin('f', 1, NOW + 1)], pinned: [f] })))[0]).toBe('f');
  });

  it('never pins the page being read, an article the request or the block excludes, or an unknown one', () => {
    const f = site[5];
    expect(order(rank(input({ pins: [pin('f', 1)], pinned: [f], currentGuid: 'f' })))).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(order(rank(input({ pins: [pin('f', 1)], pinned: [f], excluded: new Set(['f']) })))).not.toContain('f');
    expect(order(rank(input({ pins: [pin('f', 1)], pinned: [f], exclude: { guids: ['f'], categories: [] } })))).not.toContain('f');
    // Unknown or deleted: the catalogue does not have it (not in `pinned`), nothing takes its place.
    expect(order(rank(input({ pins: [pin('zz', 1)], pinned: [] })))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // On another host than the block allows.
    const away = article('away', { url: 'https://elsewhere.example/away' });
    expect(order(rank(input({ pins: [{ ...pin('away', 1), url: away.url }], pinned: [away] })))).not.toContain('away');
  });
});

describe('block exclusions', () => {
  it('never recommends an excluded URL or category (case-insensitive)', () => {
    const sport = site.map((a, i) => (i % 2 === 0 ? { ...a, category: 'Sport' } : a));
    expect(order(rank(input({ candidates: sport, exclude: { guids: ['b'], categories: ['sport'] } })))).toEqual(['d', 'f']);
  });
});

describe('reasons', () => {
  const reasonFor = (a: Article, signals: Partial<Ranked['signals']>, o: Partial<Pick<RankInput, 'covisitFrom' | 'titles' | 'tastes'>> = {}, prefs: string[] = []) =>
    reasonOf({ article: a, score: 0, signals: { covisit: 0, content: 0, preferences: 0, popularity: 0, freshness: 0, ...signals } }, { tastes: {}, ...o }, new Set(prefs));

  it('names the dominant signal of the item', () => {
    const a = article('a', { themes: ['ai', 'cars'] });
    const from = { covisitFrom: new Map([['a', 'page']]), titles: new Map([['page', 'The page']]) };
    expect(reasonFor(a, { covisit: 0.5, popularity: 0.2 }, from)).toEqual({ type: 'covisit', from: { guid: 'page', title: 'The page' } });
    expect(reasonFor(a, { covisit: 0.1, preferences: 0.6 }, from, ['cars'])).toEqual({ type: 'preferences', theme: 'cars' });
    // An implicit taste names the theme the reader reads most.
    expect(reasonFor(a, { preferences: 0.3 }, { tastes: { ai: 5, cars: 1 } })).toEqual({ type: 'preferences', theme: 'ai' });
    expect(reasonFor(a, { popularity: 0.3, freshness: 0.1 })).toEqual({ type: 'popular' });
    expect(reasonFor(a, { popularity: 0.1, freshness: 0.2 })).toEqual({ type: 'fresh' });
    // Content similarity names nothing: the next signal does, or none.
    expect(reasonFor(a, { content: 0.9, popularity: 0.1 })).toEqual({ type: 'popular' });
    expect(reasonFor(a, { content: 0.9 })).toBeUndefined();
    // A co-visit whose source page has no known title: the next signal.
    expect(reasonFor(a, { covisit: 0.5, popularity: 0.2 }, { covisitFrom: new Map([['a', 'page']]) })).toEqual({ type: 'popular' });
  });

  it("names the read page whose co-reads contributed most, with its title (rankingFor on the in-memory store)", async () => {
    const store = new MemoryStore();
    const C = 'c';
    const url = (n: string) => `https://site.example/${n}`;
    const track = (user: string, n: string, t: number) => trackPageView(store, C, { userId: user, url: url(n), title: `Title ${n}` }, t);
    // Others read "prev" then "next"; the reader read "prev", then "page", which nobody else read.
    for (let i = 0; i < 3; i++) {
      await track(`o${i}`, 'prev', NOW - 600);
      await track(`o${i}`, 'next', NOW - 590);
    }
    for (let i = 0; i < 5; i++) await track(`p${i}`, 'popular', NOW - 500);
    await track('reader', 'prev', NOW - 120);
    await track('reader', 'page', NOW - 60);
    const settings = { ...blockSettings({ clientId: C, kind: 'block' } as never, { id: C, siteHosts: ['site.example'] } as never), rows: 10 };
    const ranking = await rankingFor(store, settings, { clientId: C, userId: 'reader', pageUrl: url('page'), excluded: [], now: NOW });
    expect(ranking[0].article.url).toBe(url('next'));
    expect(ranking[0].reason).toEqual({ type: 'covisit', from: { guid: articleGuid(url('prev')), title: 'Title prev' } });
    expect(ranking.find((r) => r.article.url === url('popular'))?.reason).toEqual({ type: 'popular' });

    // A pin of the block, fetched from the store although no candidate list has it; an excluded[] guid leaves an article out.
    const pinned = { ...settings, pins: [{ url: url('popular'), guid: articleGuid(url('popular')), position: 1 }] };
    const withPin = await rankingFor(store, pinned, { clientId: C, userId: 'reader', pageUrl: url('page'), excluded: [articleGuid(url('next'))], now: NOW });
    expect(withPin[0]).toMatchObject({ pinned: true, reason: { type: 'pinned' } });
    expect(withPin[0].article.url).toBe(url('popular'));
    expect(withPin.map((r) => r.article.url)).not.toContain(url('next'));
  });
});
