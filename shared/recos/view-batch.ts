/**
 * The page-view consumer's rules: a batch becomes one update per article, one read and write per reader, one update
 * per co-visit item and one fresh-list write, and gives the same records as applying its views one by one in time
 * order (test/unit/recos-view-batch.test.ts).
 */
import { BatchDeadlineError } from './errors.js';
import { freshListable } from './settings.js';
import type { ViewBatchStore } from './port.js';
import { mergeReader, type ArticleMeta, type PageView } from './tracking.js';
import { articleGuid } from './urls.js';
import type { Article, ArticleViews } from './types.js';

/** One page view as the tracking request queues it: the client, the view, and when it happened (Unix seconds). */
export interface QueuedView {
  clientId: string;
  view: PageView;
  t: number;
}

export type { ArticleViews } from './types.js';

/** What applying a batch did, for the consumer's answer and metrics. */
export interface BatchResult {
  /** Ids of the views whose article update failed: nothing of them was applied, so they can be delivered again. */
  failed: string[];
  /** Of `failed`, the views whose article update was not started because the batch ran out of time. */
  deferred: number;
  /** Views counted on an article (deleted articles' views are not). */
  counted: number;
  /** Views of deleted articles (dropped). */
  dropped: number;
  /** Articles updated, readers written, co-visit items updated, fresh-list entries added. */
  articles: number;
  readers: number;
  covisitItems: number;
  fresh: number;
  /** Reader, co-visit or fresh-list writes that failed after the article counts were applied (not retried: see docs/architecture.md). */
  lostEffects: number;
  /** Neighbour snapshots rewritten (shared/recos/neighbours.ts); a failed rewrite is retried at the article's next batch. */
  neighbourSnapshots: number;
  /** Popular snapshots rewritten (shared/recos/read-cache.ts) and clients whose rewrite failed (the next batch after the period tries again). */
  popularSnapshots: number;
  popularFailures: number;
  /** Clients whose snapshot rewrite failed in this batch. */
  neighbourFailures: number;
}

/**
 * When a batch stops starting work, on `now`'s clock (ms): article updates not started by `articlesBy` are left
 * for redelivery (nothing of their views applied); reader, co-visit, fresh-list and snapshot writes not started by
 * `effectsBy` are skipped and counted as lost effects. So a batch answers before its function's timeout, and SQS never
 * delivers again a view whose article count landed.
 */
export interface BatchDeadline {
  now: () => number;
  articlesBy: number;
  effectsBy: number;
}

/** Articles whose updates start together; the deadline is looked at between them (one BatchGetItem each). */
const ARTICLE_CHUNK = 100;
/** Likewise readers written and co-visit items updated together. */
const EFFECT_CHUNK = 100;

/** The fresh list takes at most 100 entries per write (one UpdateExpression stays under DynamoDB's 4 KB). */
async function addFreshInChunks(store: ViewBatchStore, clientId: string, entries: Array<{ guid: string; published: number }>, now: number): Promise<void> {
  for (let i = 0; i < entries.length; i += 100) await store.addFresh(clientId, entries.slice(i, i + 100), now);
}

/** Field-by-field metadata merge in time order: given (non-empty) fields of a later view replace earlier ones. */
function mergeMeta(into: ArticleMeta, next: ArticleMeta): ArticleMeta {
  const out: ArticleMeta = { ...into, url: next.url };
  for (const name of ['title', 'desc', 'image', 'category'] as const) if (next[name] !== undefined && next[name] !== '') out[name] = next[name];
  if (next.published !== undefined) out.published = next.published;
  if (next.themes && next.themes.length > 0) out.themes = next.themes;
  return out;
}

/** Groups one client's views by article, in time order. */
export function groupByArticle(views: Array<{ view: PageView; t: number }>): ArticleViews[] {
  const groups = new Map<string, ArticleViews>();
  for (const { view, t } of [...views].sort((a, b) => a.t - b.t)) {
    const { userId: _u, ...meta } = view;
    const guid = articleGuid(view.url);
    const group = groups.get(guid);
    if (!group) groups.set(guid, { guid, meta, times: [t] });
    else {
      group.meta = mergeMeta(group.meta, meta);
      group.times.push(t);
    }
  }
  return [...groups.values()];
}

/** A reader written again after a concurrent batch changed it at most this many times (then its views' reads are lost, counted). */
const READER_ATTEMPTS = 6;

/**
 * The readers of a batch's counted views: each reader's views merged in
 * time order into their stored state and written only if nobody wrote the
 * reader meanwhile (conditional on its version); a reader changed by a
 * batch running at the same time (SQS spreads one reader's views over
 * concurrent batches) is read again, strongly consistent, and merged again.
 * The co-read pairs come from the merge that was written, so each pair is
 * counted once and none is lost to a concurrent batch.
 */
async function applyReaders(
  store: ViewBatchStore,
  clientId: string,
  applied: Array<QueuedView & { id: string }>,
  articles: Map<string, Article>,
  late: () => boolean,
): Promise<{ readersWritten: number; readersLost: number; covisits: Map<string, Record<string, number>> }> {
  const views = new Map<string, Array<QueuedView & { id: string }>>();
  for (const item of [...applied].sort((a, b) => a.t - b.t)) {
    const list = views.get(item.view.userId);
    if (list) list.push(item);
    else views.set(item.view.userId, [item]);
  }
  const covisits = new Map<string, Record<string, number>>();
  const bump = (from: string, to: string, w: number) => {
    const counts = covisits.get(from) ?? {};
    counts[to] = (counts[to] ?? 0) + w;
    covisits.set(from, counts);
  };
  let pending = [...views.keys()];
  let written = 0;
  let lost = 0;
  // A read that fails (or comes too late) loses these readers' reads, counted, as a failed write does: their article counts stand.
  const read = (o?: { consistent?: boolean }) => (late() ? Promise.resolve(undefined) : store.readers(clientId, pending, o).catch(() => undefined));
  let stored = await read();
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (!stored) return { readersWritten: written, readersLost: lost + pending.length, covisits };
    const before = stored;
    const merged = pending.map((userId) => {
      const base = before.get(userId);
      let reader = base?.reader;
      const pairs: Array<[string, string, number]> = [];
      for (const item of views.get(userId)!) {
        const article = articles.get(articleGuid(item.view.url))!;
        const next = mergeReader(reader, userId, article, item.t);
        reader = next.reader;
        next.session.forEach((other, k) => pairs.push([article.guid, other, next.weights[k]]));
      }
      return { write: { reader: reader!, version: base?.version }, pairs };
    });
    const conflicts = new Set<string>();
    const unwritten = new Set<string>();
    for (let i = 0; i < merged.length; i += EFFECT_CHUNK) {
      const chunk = merged.slice(i, i + EFFECT_CHUNK);
      try {
        if (late()) throw new BatchDeadlineError();
        for (const userId of await store.putReaders(clientId, chunk.map((m) => m.write))) conflicts.add(userId);
      } catch {
        // Not written (or not known to be), or too late: counted as lost effects; the article counts stand.
        for (const m of chunk) unwritten.add(m.write.reader.userId);
      }
    }
    lost += unwritten.size;
    for (const m of merged) {
      if (conflicts.has(m.write.reader.userId) || unwritten.has(m.write.reader.userId)) continue;
      written++;
      for (const [a, b, w] of m.pairs) {
        bump(a, b, w);
        bump(b, a, w);
      }
    }
    pending = [...conflicts];
    if (pending.length === 0) break;
    if (attempt >= READER_ATTEMPTS) return { readersWritten: written, readersLost: lost + pending.length, covisits };
    stored = await read({ consistent: true });
  }
  return { readersWritten: written, readersLost: lost, covisits };
}

/** A batch result with nothing applied. */
export const emptyResult = (): BatchResult => ({ failed: [], deferred: 0, counted: 0, dropped: 0, articles: 0, readers: 0, covisitItems: 0, fresh: 0, lostEffects: 0, neighbourSnapshots: 0, neighbourFailures: 0, popularSnapshots: 0, popularFailures: 0 });

/**
 * Applies a batch of queued views (any clients, any order), per client: article updates first (a failed one goes to
 * `failed` with nothing else of its view applied, so redelivery counts it once), then readers merged in time order,
 * co-visit pairs per item, and first views onto the fresh list.
 */
export async function applyViewBatch(store: ViewBatchStore, batch: Array<QueuedView & { id: string }>, deadline?: BatchDeadline): Promise<BatchResult> {
  const result = emptyResult();
  const articlesLate = () => deadline !== undefined && deadline.now() >= deadline.articlesBy;
  const effectsLate = () => deadline !== undefined && deadline.now() >= deadline.effectsBy;
  const byClient = new Map<string, Array<QueuedView & { id: string }>>();
  for (const item of batch) {
    const list = byClient.get(item.clientId);
    if (list) list.push(item);
    else byClient.set(item.clientId, [item]);
  }
  for (const [clientId, items] of byClient) {
    const groups = groupByArticle(items);
    const outcomes: Array<Article | undefined | Error> = [];
    for (let i = 0; i < groups.length; i += ARTICLE_CHUNK) {
      const chunk = groups.slice(i, i + ARTICLE_CHUNK);
      outcomes.push(...(articlesLate() ? chunk.map(() => new BatchDeadlineError()) : await store.recordViews(clientId, chunk)));
    }
    const articles = new Map<string, Article>();
    const failedGuids = new Set<string>();
    const deferredGuids = new Set<string>();
    groups.forEach((g, i) => {
      const outcome = outcomes[i];
      if (outcome instanceof BatchDeadlineError) deferredGuids.add(g.guid);
      if (outcome instanceof Error) failedGuids.add(g.guid);
      else if (outcome) articles.set(g.guid, outcome);
    });
    result.articles += articles.size;
    const applied = items.filter((item) => {
      const guid = articleGuid(item.view.url);
      if (failedGuids.has(guid)) {
        result.failed.push(item.id);
        if (deferredGuids.has(guid)) result.deferred++;
        return false;
      }
      if (!articles.has(guid)) {
        result.dropped++;
        return false;
      }
      return true;
    });
    result.counted += applied.length;
    if (applied.length === 0) continue;
    const now = Math.max(...applied.map((i) => i.t));
    const { readersWritten, readersLost, covisits } = await applyReaders(store, clientId, applied, articles, effectsLate);
    result.readers += readersWritten;
    result.lostEffects += readersLost;
    // An article's first view puts it on the fresh list (exactly one batch sees its views equal to its own count), when a page gave its
    // publication time (a page without one is dated by that view, which says nothing of its age) and it is listable (not far ahead).
    const fresh = groups
      .filter((g) => {
        const a = articles.get(g.guid);
        return a !== undefined && a.views === g.times.length && g.meta.published !== undefined && freshListable(a.published, now);
      })
      .map((g) => ({ guid: g.guid, published: articles.get(g.guid)!.published }));
    const addCovisits = async () => {
      const items = [...covisits];
      for (let i = 0; i < items.length; i += EFFECT_CHUNK) {
        const chunk = items.slice(i, i + EFFECT_CHUNK);
        const done = !effectsLate() && (await store.addCovisitCounts(clientId, new Map(chunk)).then(() => true, () => false));
        if (done) result.covisitItems += chunk.length;
        else result.lostEffects += chunk.length;
      }
    };
    const addFresh = () => (effectsLate() ? Promise.reject(new BatchDeadlineError()) : addFreshInChunks(store, clientId, fresh, now));
    const [, freshDone] = await Promise.allSettled([addCovisits(), addFresh()]);
    if (freshDone.status === 'fulfilled') result.fresh += fresh.length;
    else result.lostEffects += fresh.length;
    // Last, from the co-visit counts as they are now: the viewed articles' neighbour snapshots that were due (a derived copy: a failure only
    // means requests on those pages read their neighbours themselves until the article's next batch rewrites it).
    if (store.refreshNeighbours && !effectsLate()) {
      try {
        result.neighbourSnapshots += await store.refreshNeighbours(clientId);
      } catch {
        result.neighbourFailures++;
      }
    }
    // And the client's popular snapshot when its period is over (also a derived copy: without it, a container's first request queries gsi1).
    if (store.refreshPopular && !effectsLate()) {
      try {
        if (await store.refreshPopular(clientId)) result.popularSnapshots++;
      } catch {
        result.popularFailures++;
      }
    }
  }
  return result;
}

