import { rank, type Ranked } from './ranking.js';
import type { RecosStore } from './store.js';
import type { BlockSettings } from './types.js';
import { articleGuid } from './urls.js';

/**
 * Candidates per request: the most popular articles, the newest articles
 * inside the block's freshness window (viewed or not: the catalogue's new
 * articles), plus the strongest co-visit neighbours not among them.
 */
export const CANDIDATES = { popular: 200, fresh: 50, neighbours: 50 };

export interface RankingRequest {
  clientId: string;
  userId: string;
  /** Canonical URL of the page being read, when known. */
  pageUrl?: string;
  /** Canonical URLs to leave out. */
  excluded: string[];
  now: number;
}

/**
 * The reader's whole ranking for one block (at most `maxRows` entries); a
 * page of it is `start`..`start + rows`. Storage round trips: context,
 * popular and fresh articles in parallel (fresh once the settings are
 * known), then the missing co-visit neighbours (4 calls, 2 or 3 sequential
 * rounds). The settings may still be loading (the client's site hosts are
 * read in parallel with the context).
 */
export async function rankingFor(store: RecosStore, blockSettings: BlockSettings | Promise<BlockSettings>, q: RankingRequest): Promise<Ranked[]> {
  const currentGuid = q.pageUrl ? articleGuid(q.pageUrl) : undefined;
  const [context, popular, [settings, fresh]] = await Promise.all([
    store.context(q.clientId, { userId: q.userId, guid: currentGuid, preferences: true, covisits: true }),
    store.hotArticles(q.clientId, CANDIDATES.popular),
    Promise.resolve(blockSettings).then(async (s) => [s, s.freshnessHours > 0 ? await store.freshArticles(q.clientId, q.now - s.freshnessHours * 3600, CANDIDATES.fresh) : []] as const),
  ]);
  const covisits = context.covisits ?? {};
  const known = new Set([...popular, ...fresh].map((a) => a.guid));
  const neighbours = Object.entries(covisits)
    .filter(([guid]) => !known.has(guid))
    .sort(([ga, a], [gb, b]) => b - a || (ga < gb ? -1 : 1))
    .slice(0, CANDIDATES.neighbours)
    .map(([guid]) => guid);
  const extra = neighbours.length > 0 ? await store.articles(q.clientId, neighbours) : [];
  return rank({
    candidates: [...popular, ...fresh, ...extra],
    current: context.article,
    currentGuid,
    covisits,
    read: new Set((context.reader?.reads ?? []).map((r) => r.g)),
    tastes: context.reader?.tastes ?? {},
    preferences: context.preferences?.themes ?? [],
    excluded: new Set(q.excluded.map(articleGuid)),
    settings,
    now: q.now,
  });
}
