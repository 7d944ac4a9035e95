/**
 * The article catalogue: what a publisher tells the service about its
 * articles ahead of traffic, through `PUT /v1/articles` or a feed (feeds.ts),
 * so a new article can be recommended before its first reader. Catalogue
 * articles are the same records tracking builds (one article per canonical
 * URL and guid, on the client's site hosts).
 */
import * as v from 'valibot';
import { faultDetail, isRetryableStorageFault, runPool } from '../db/client.js';
import { getClient } from '../clients/clients.js';
import { siteHostAllowed, storedSiteHosts } from '../clients/site-hosts.js';
import { NoSiteHostsError, PartialCatalogueWriteError, UnknownArticleError } from './errors.js';
import { describeIssues } from '../validation.js';
import { count, logger } from '../observability/index.js';
import { DynamoStore } from './dynamo-store.js';
import { ArticleInputSchema } from './schemas.js';
import { freshListable } from './settings.js';
import type { FreshEntry } from './types.js';
import { articleGuid } from './urls.js';

const store = new DynamoStore();
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Upserts run this many at a time. */
const CONCURRENCY = 16;
/** Fresh-list entries per write. */
const FRESH_BATCH = 100;

export interface CatalogueLine {
  line: number;
  status: 'created' | 'updated' | 'rejected';
  url?: string;
  guid?: string;
  cause?: string;
}

export interface CatalogueReport {
  created: number;
  updated: number;
  rejected: number;
  lines: CatalogueLine[];
}

/** The client's site hosts, or a 403 when it has none (the catalogue, like tracking, is off until support sets them). */
async function siteHostsOf(clientId: string): Promise<string[]> {
  const siteHosts = storedSiteHosts((await getClient(clientId))?.siteHosts);
  if (siteHosts.length === 0) throw new NoSiteHostsError('the client has no site hosts yet, so the catalogue is off (support sets them: admin set-hosts)');
  return siteHosts;
}

/**
 * Creates or updates articles from raw lines (request body or feed items), each validated alone, its URL canonical and
 * on a site host; the last of duplicates wins, counters are never touched, a deleted article returns only with
 * `revive`. A storage fault throws PartialCatalogueWriteError saying how many were applied.
 */
export async function upsertArticles(clientId: string, siteHosts: string[], raw: unknown[], { where = 'body', revive = true, now = nowSeconds() } = {}): Promise<CatalogueReport> {
  const lines: CatalogueLine[] = [];
  const valid = new Map<string, { line: CatalogueLine; input: v.InferOutput<typeof ArticleInputSchema> }>();
  raw.forEach((value, i) => {
    const line: CatalogueLine = { line: i + 1, status: 'rejected' };
    lines.push(line);
    const parsed = v.safeParse(ArticleInputSchema, value);
    if (!parsed.success) {
      line.cause = describeIssues(`${where}[${i}]`, parsed.issues);
      return;
    }
    const input = parsed.output;
    line.url = input.url;
    line.guid = articleGuid(input.url);
    const host = new URL(input.url).hostname;
    if (!siteHostAllowed(siteHosts, host)) {
      line.cause = `${where}[${i}].url: host ${host} is not one of the client's site hosts`;
      return;
    }
    const earlier = valid.get(line.guid);
    if (earlier) earlier.line.cause = `${where}[${earlier.line.line - 1}].url: the same article as line ${line.line}, which is applied instead`;
    valid.set(line.guid, { line, input });
  });
  let applied = 0;
  let failure: unknown;
  const fresh: FreshEntry[] = [];
  await runPool([...valid.values()], CONCURRENCY, async ({ line, input }) => {
    if (failure) return;
    try {
      const meta = { url: input.url, title: input.title, desc: input.description, image: input.image, category: input.category, published: input.published_time, themes: input.themes };
      const result = await store.upsertArticle(clientId, meta, now, { revive });
      if (!result) {
        line.cause = `${where}[${line.line - 1}].url: the article was deleted from the catalogue (DELETE /v1/articles); only PUT /v1/articles brings it back`;
        return;
      }
      line.status = result.created ? 'created' : 'updated';
      applied++;
      if (freshListable(result.article.published, now)) fresh.push({ guid: result.article.guid, published: result.article.published });
    } catch (err) {
      failure ??= err;
    }
  });
  // The fresh list (recommendation candidates before a first view): one write per 100 articles, not one per article (a hot item).
  for (let i = 0; i < fresh.length && !failure; i += FRESH_BATCH) {
    try {
      await store.addFresh(clientId, fresh.slice(i, i + FRESH_BATCH), now);
    } catch (err) {
      failure = err;
    }
  }
  count('CatalogueArticlesUpserted', applied);
  if (failure) {
    const retryable = isRetryableStorageFault(failure);
    logger.warn('catalogue write failed', { retryable, applied, total: valid.size, detail: faultDetail(failure), error: failure });
    if (!retryable) throw new PartialCatalogueWriteError(applied, valid.size, false, { cause: failure });
    throw new PartialCatalogueWriteError(applied, valid.size, true, { cause: failure });
  }
  const countOf = (status: CatalogueLine['status']) => lines.filter((l) => l.status === status).length;
  return { created: countOf('created'), updated: countOf('updated'), rejected: countOf('rejected'), lines };
}

/** `PUT /v1/articles`: 1 to 1,000 articles of the token's client. */
export async function putArticles(clientId: string, body: unknown[]): Promise<CatalogueReport> {
  return upsertArticles(clientId, await siteHostsOf(clientId), body);
}

/** `DELETE /v1/articles?url=…`: the article, its counters and co-visits go; it is never recommended again (404 when unknown). */
export async function deleteArticle(clientId: string, url: string): Promise<{ url: string; guid: string }> {
  const guid = articleGuid(url);
  if (!(await store.deleteArticle(clientId, guid))) throw new UnknownArticleError(url, `Unknown article ${url}`);
  return { url, guid };
}
