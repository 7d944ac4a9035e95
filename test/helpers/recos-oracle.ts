/**
 * The one-by-one oracle of page-view tracking: each view applied on its own,
 * as POST /v1/track did before the tracking queue (6 to 12 store calls per
 * view). The consumer's batches must give the same records
 * (test/unit/recos-view-batch.test.ts); bench:recos:tracking measures its
 * writes against the batches' (bench/per-view-store.ts).
 */
import { freshListable } from '../../shared/recos/settings.js';
import { mergeReader } from '../../shared/recos/tracking.js';
import type { RecosStore } from '../../shared/recos/port.js';
import type { Article, Covisits, PageView, Reader } from '../../shared/recos/types.js';

/** The per-view writes the oracle needs besides the request port. */
export interface PerViewStore extends Pick<RecosStore, 'context' | 'addFresh'> {
  /**
   * Counts one page view of an article (creating it), refreshing its metadata
   * from what the page sent, and returns the article after it. An article
   * deleted from the catalogue is not counted (undefined).
   */
  recordView(clientId: string, view: PageView, now: number): Promise<Article | undefined>;
  putReader(clientId: string, reader: Reader): Promise<void>;
  /** Adds a co-read of `guid` with each of `others` (guid → weight: `coReadWeight`), in both directions. */
  addCovisits(clientId: string, guid: string, others: Covisits): Promise<void>;
}

/**
 * Records a page view: counts it on the article (creating it, refreshing its
 * metadata; not for an article deleted from the catalogue, whose views are
 * not counted) while reading the reader, then stores the reader's reads and
 * tastes and the co-visits of the article with the reader's earlier reads of
 * the same session; an article's first view puts it on the fresh list.
 */
export async function trackPageView(store: PerViewStore, clientId: string, view: PageView, now: number): Promise<Article | undefined> {
  const [{ reader }, article] = await Promise.all([store.context(clientId, { userId: view.userId }), store.recordView(clientId, view, now)]);
  // A deleted article (DELETE /v1/articles) is not counted, nor read, nor co-visited.
  if (!article) return undefined;
  const merged = mergeReader(reader, view.userId, article, now);
  // An article's first view puts it on the fresh list, as the catalogue does (once per article: a fresh candidate before it is popular);
  // only with a publication time from the page: a page without one is dated by its first view, which says nothing of its age.
  const isNew = article.views === 1 && view.published !== undefined && freshListable(article.published, now);
  await Promise.all([
    store.putReader(clientId, merged.reader),
    merged.session.length > 0 ? store.addCovisits(clientId, article.guid, Object.fromEntries(merged.session.map((g, i) => [g, merged.weights[i]]))) : undefined,
    isNew ? store.addFresh(clientId, [{ guid: article.guid, published: article.published }], now) : undefined,
  ]);
  return article;
}
