import { rank, type Ranked } from './ranking.js';
import { FRESH_AHEAD_SECONDS } from './settings.js';
import { NEIGHBOUR_MAX_AGE_SECONDS, type NeighbourSnapshot } from './neighbours.js';
import type { RecosStore, SeedCoReads } from './port.js';
import type { Client } from '../clients/clients.js';
import type { BlockSettings, Covisits } from './types.js';
import { articleGuid } from './urls.js';
import { LIMITS } from './limits.js';
import { traced } from '../observability/index.js';

/**
 * Candidates per request: the most popular, the newest in the block's freshness window (the fresh list) and the
 * strongest co-visit neighbours not among them (fresh + neighbours ≤ 80, one BatchGetItem). Ten neighbours rank as
 * well as thirty at a third of the article reads (docs/benchmarks.md).
 */
export const CANDIDATES = { popular: 200, fresh: 70, neighbours: 10 };

/**
 * The session's last two reads (within `SEED_WINDOW_SECONDS`, the session gap) also seed the co-read signal, at half
 * and a quarter of the current page's weight: a higher hit rate (docs/benchmarks.md); a longer window pulls a new
 * visit toward the last one's. Costs one BatchGetItem when the reader has such reads.
 */
export const SEED_WEIGHTS = [0.5, 0.25];
export const SEED_WINDOW_SECONDS = LIMITS.sessionGapSeconds;

export interface RankingRequest {
  clientId: string;
  userId: string;
  /** Canonical URL of the page being read, when known. */
  pageUrl?: string;
  /** Canonical URLs or article guids to leave out. */
  excluded: string[];
  now: number;
}

/**
 * The reader's whole ranking for one block (at most `maxRows`; a page is `start`..`start + rows`), in at most 3 calls
 * over 2 rounds: context and popular list in parallel, then the other candidates' articles (read-cache.ts copies
 * when fresh). `blockSettings` may be given, pending, or built from the client record (and may refuse by throwing).
 */
export async function rankingFor(
  store: RecosStore,
  blockSettings: BlockSettings | Promise<BlockSettings> | ((client: Client | undefined) => BlockSettings),
  q: RankingRequest,
): Promise<Ranked[]> {
  const currentGuid = q.pageUrl ? articleGuid(q.pageUrl) : undefined;
  const ofClient = typeof blockSettings === 'function' ? blockSettings : undefined;
  const [context, cachedPopular, given] = await Promise.all([
    store.context(q.clientId, { userId: q.userId, guid: currentGuid, preferences: true, covisits: true, neighbours: true, fresh: true, deletions: true, client: ofClient !== undefined, cached: true }),
    store.hotArticles(q.clientId, CANDIDATES.popular, { cached: true, now: q.now }),
    ofClient ? undefined : (blockSettings as BlockSettings | Promise<BlockSettings>),
  ]);
  const settings = ofClient ? ofClient(context.client) : given!;
  // Cached copies may predate a deletion: articles deleted lately never come from them.
  const deleted = context.deleted ?? new Set<string>();
  const popular = deleted.size > 0 ? cachedPopular.filter((a) => !deleted.has(a.guid)) : cachedPopular;
  // The current page's co-reads, plus the previous reads' at their seed weights.
  const seeds = (context.reader?.reads ?? []).filter((r) => r.g !== currentGuid && r.t >= q.now - SEED_WINDOW_SECONDS).slice(0, SEED_WEIGHTS.length);
  const seeded = seeds.length > 0 ? await store.coReads(q.clientId, seeds.map((r) => r.g)) : new Map<string, SeedCoReads>();
  const covisits: Covisits = { ...(context.covisits ?? {}) };
  // For reasons: which page's co-reads (the current page's or a seed's, weighted) gave each candidate the most.
  const covisitFrom = new Map<string, string>();
  const strongest = new Map<string, number>();
  const source = (guid: string, from: string, n: number) => {
    if (n <= (strongest.get(guid) ?? 0)) return;
    covisitFrom.set(guid, from);
    strongest.set(guid, n);
  };
  if (currentGuid) for (const [guid, n] of Object.entries(context.covisits ?? {})) source(guid, currentGuid, n);
  seeds.forEach((r, k) => {
    for (const [guid, n] of Object.entries(seeded.get(r.g)?.covisits ?? {})) {
      covisits[guid] = (covisits[guid] ?? 0) + SEED_WEIGHTS[k] * n;
      source(guid, r.g, SEED_WEIGHTS[k] * n);
    }
  });
  const known = new Set(popular.map((a) => a.guid));
  const since = q.now - settings.freshnessHours * 3600;
  const fresh =
    settings.freshnessHours > 0
      ? (context.fresh ?? [])
          // Dated more than an hour ahead: not fresh yet (freshness is 0), so it does not take a slot.
          .filter((e) => e.published >= since && e.published <= q.now + FRESH_AHEAD_SECONDS && !known.has(e.guid))
          .sort((a, b) => b.published - a.published || (a.guid < b.guid ? -1 : 1))
          .slice(0, CANDIDATES.fresh)
          .map((e) => e.guid)
      : [];
  const freshGuids = new Set(fresh);
  const neighbours = Object.entries(covisits)
    .filter(([guid]) => !known.has(guid) && !freshGuids.has(guid))
    .sort(([ga, a], [gb, b]) => b - a || (ga < gb ? -1 : 1))
    .slice(0, CANDIDATES.neighbours)
    .map(([guid]) => guid);
  // Neighbours from the page's and the seeds' snapshots (precomputed by the page-view consumer) while young enough; articles deleted lately never from them.
  const young = (s: NeighbourSnapshot | undefined) => (s && q.now - s.at < NEIGHBOUR_MAX_AGE_SECONDS ? s.articles : []);
  const snapshot = [...young(context.neighbours), ...[...seeded.values()].flatMap((s) => young(s.neighbours))];
  const fromSnapshot = new Map(snapshot.filter((a) => !deleted.has(a.guid)).map((a) => [a.guid, a]));
  const found = neighbours.flatMap((g) => fromSnapshot.get(g) ?? []);
  const inHand = new Map([...popular, ...found].map((a) => [a.guid, a]));
  // The block's pins and the seeds (for the titles of reasons) come along in the same read when not in hand.
  const pinGuids = settings.pins.filter((p) => p.until === undefined || p.until > q.now).map((p) => p.guid);
  const wanted = [...new Set([...pinGuids, ...seeds.map((r) => r.g)])].filter((g) => !inHand.has(g) && !freshGuids.has(g) && !neighbours.includes(g));
  const missing = [...fresh, ...neighbours.filter((g) => !fromSnapshot.has(g)), ...wanted];
  const extra = missing.length > 0 ? await store.articles(q.clientId, missing, { cached: true, uncached: deleted }) : [];
  for (const a of extra) inHand.set(a.guid, a);
  const titles = new Map<string, string>();
  if (context.article && currentGuid) titles.set(currentGuid, context.article.title);
  for (const r of seeds) if (inHand.get(r.g)?.title) titles.set(r.g, inHand.get(r.g)!.title);
  const extraGuids = new Set(wanted);
  return traced('### ranking', () => rank({
    // Pins and seeds fetched only for pins and reasons are no candidates (a seed is read, a pin is placed by rank).
    candidates: [...popular, ...found, ...extra.filter((a) => !extraGuids.has(a.guid))],
    current: context.article,
    currentGuid,
    covisits,
    read: new Set((context.reader?.reads ?? []).map((r) => r.g)),
    tastes: context.reader?.tastes ?? {},
    preferences: context.preferences?.themes ?? [],
    excluded: new Set(q.excluded.map(excludedGuid)),
    settings,
    pinned: pinGuids.flatMap((g) => (deleted.has(g) ? [] : (inHand.get(g) ?? []))),
    covisitFrom,
    titles,
    now: q.now,
  }));
}

/** An `excluded[]` value's guid: a canonical URL's, or the value itself when it is a guid (as answered in `guid`). */
const excludedGuid = (value: string) => (GUID.test(value) ? value : articleGuid(value));
export const GUID = /^[0-9a-f]{20}$/;
