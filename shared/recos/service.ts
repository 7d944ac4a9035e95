/**
 * The recommendation endpoints' services over the DynamoDB store: key
 * resolution, request rules, and the calls into tracking and ranking.
 */
import { getClient, recommSecretOf, resolvePublicKey, type BlockKey, type Client } from '../clients/clients.js';
import { siteHostAllowed, storedSiteHosts } from '../clients/site-hosts.js';
import { InvalidRecosRequestError, NoSiteHostsError, TrackingRefusedError, UnknownArticleError, UnknownBlockKeyError, UnknownTrackingKeyError } from './errors.js';
import { envelope } from './envelope.js';
import { DynamoStore } from './dynamo-store.js';
import { forgetReaderItems } from './dynamo-items.js';
import { DynamoViewStore } from './dynamo-views.js';
import { addLogKeys, count, logger } from '../observability/index.js';
import { algoName, shuffled, SIGNALS } from './ranking.js';
import { GUID, rankingFor } from './recommend.js';
import type { TrackBodyOutput } from './schemas.js';
import { blockSettings, hostAllowed } from './settings.js';
import type { BlockSettings, Envelope, Preferences, Variant } from './types.js';
import { BLOCK_KEY_CACHE_SECONDS, monotonicMs, TtlCache } from './read-cache.js';
import { checkReaderId } from './reader-ids.js';
import { batchDeadline, consumeViews, enqueueRecoCount, enqueueView } from './view-queue.js';
import { assignVariant, countedVariant, DEFAULT_VARIANT, HOLDOUT_ALGO, newRecommId, variantSettings } from './experiments.js';
import { dynamoRecoCounts, firstClick } from './dynamo-reco-counts.js';
import { verifyRid } from './recomm-ids.js';
import { articleGuid, canonicalUrl, toHttps } from './urls.js';

const store = /* @__PURE__ */ new DynamoStore();
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Block key items (their settings: `PUT /v1/blocks/{block_key}`) by key, for `BLOCK_KEY_CACHE_SECONDS` of the
 * container's life (the monotonic clock, as every copy of a key's settings: shared/ttl-cache.ts `monotonicMs`);
 * unknown keys are not kept.
 */
const blockKeys = /* @__PURE__ */ new TtlCache<BlockKey>(10_000, BLOCK_KEY_CACHE_SECONDS * 1000, monotonicMs);

async function blockKeyItem(blockKey: string): Promise<BlockKey | undefined> {
  const copy = blockKeys.get(blockKey);
  if (copy) return copy;
  const item = await resolvePublicKey('block', blockKey);
  if (item) blockKeys.set(blockKey, item);
  return item;
}

/**
 * How long a container answers tracking requests from its copy of a tracking key's client record (site hosts,
 * signed reader ids, signing secret): a change by `admin set-hosts` or `set-signed-ids` (turning tracking off for a
 * host, requiring signatures, a new signing secret) takes effect in every container within this many seconds.
 * Tracking keys themselves never change once created; unknown keys and clients without site hosts are not kept
 * (a new key, or hosts set for the first time, work at once).
 */
export const TRACKING_KEY_CACHE_SECONDS = 30;

/**
 * Tracking key → its client record (both reads of a tracking request), for `TRACKING_KEY_CACHE_SECONDS` of the
 * container's life (the monotonic clock): at a site's rate a warm container reads them once per period, also in the
 * week replay, whose wall clock runs thousands of times fast (docs/benchmarks.md#recommendation-quality).
 */
const trackingKeys = /* @__PURE__ */ new TtlCache<{ clientId: string; client: Client | undefined }>(10_000, TRACKING_KEY_CACHE_SECONDS * 1000, monotonicMs);

async function trackingClient(trackingKey: string): Promise<{ clientId: string; client: Client | undefined } | undefined> {
  const copy = trackingKeys.get(trackingKey);
  if (copy) return copy;
  const key = await resolvePublicKey('tracking', trackingKey);
  if (!key) return undefined;
  const resolved = { clientId: key.clientId, client: await getClient(key.clientId) };
  // A client without site hosts is refused: not kept, so tracking starts with the first request after support sets them.
  if (storedSiteHosts(resolved.client?.siteHosts).length > 0) trackingKeys.set(trackingKey, resolved);
  return resolved;
}

/** Empties this container's short-lived copies (shared/recos/read-cache.ts): the latency benchmark's cold case. */
export function dropReadCaches(): void {
  store.dropCaches();
  blockKeys.clear();
  trackingKeys.clear();
}

/**
 * Queues a recommendation count; a failed send is logged and counted
 * (`RecoCountsLost`), never the request's failure: the reader still gets the
 * answer or the redirect.
 */
async function countRecos(c: Parameters<typeof enqueueRecoCount>[0]): Promise<void> {
  try {
    await enqueueRecoCount(c);
  } catch (err) {
    count('RecoCountsLost', 1);
    logger.warn('recommendation count not queued', { blockKey: c.blockKey, variant: c.variant, error: (err as Error).name });
  }
}

/** Clients' recommendation id secrets made by this container (its copies of client records may predate them). */
const recommSecrets = /* @__PURE__ */ new TtlCache<string>(10_000, 3_600_000, monotonicMs);

async function newRecommSecret(clientId: string): Promise<string> {
  const secret = await recommSecretOf({ id: clientId });
  recommSecrets.set(clientId, secret);
  return secret;
}

/** At most this many `excluded[]` URLs per request. */
export const MAX_EXCLUDED = 100;

const bareHost = (host: string) => host.toLowerCase().replace(/^www\./, '');

/**
 * Accepts a page view for a tracking key's client and queues it for `trackingViews` (docs/architecture.md). The URL's
 * host must be a site host of the client and a browser's `Origin` the article's own site, so the public key cannot
 * feed other sites' pages in; a view of a deleted article is accepted, not counted.
 */
export async function trackView(trackingKey: string, body: TrackBodyOutput, origin: string | undefined): Promise<{ guid: string }> {
  const key = await trackingClient(trackingKey);
  if (!key) throw new UnknownTrackingKeyError(trackingKey);
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).hostname;
    } catch {
      throw new InvalidRecosRequestError('header.origin: not a valid origin');
    }
    if (bareHost(originHost) !== bareHost(new URL(body.url).hostname)) {
      throw new InvalidRecosRequestError(`body.url: a page of ${originHost} can only track URLs of its own site`);
    }
  }
  const client = key.client;
  checkReaderId(client, body.user_id, body.sig, 'body.sig');
  const siteHosts = storedSiteHosts(client?.siteHosts);
  const urlHost = new URL(body.url).hostname;
  if (siteHosts.length === 0) {
    throw new NoSiteHostsError('body.url: the client has no site hosts yet, so tracking is off (support sets them: admin set-hosts)');
  }
  if (!siteHostAllowed(siteHosts, urlHost)) {
    throw new TrackingRefusedError(urlHost, `body.url: host ${urlHost} is not one of the client's site hosts`);
  }
  await enqueueView(
    key.clientId,
    {
      userId: body.user_id,
      url: body.url,
      title: body.title,
      desc: body.description,
      image: body.image,
      category: body.category,
      published: body.published_time,
      themes: body.themes,
    },
    nowSeconds(),
  );
  return { guid: articleGuid(body.url) };
}

/** The `trackingViews` job: a batch of queued page views applied to the DynamoDB store, within `remainingMs` (its function's remaining time). */
export async function applyQueuedViews(event: unknown, remainingMs?: number) {
  return consumeViews(new DynamoViewStore(), event, dynamoRecoCounts, remainingMs === undefined ? undefined : batchDeadline(remainingMs));
}

/** The `excluded[]` (or `excluded`) values of a raw query string, as canonical URLs or article guids. */
export function excludedUrls(rawQueryString: string | undefined): string[] {
  const out: string[] = [];
  for (const pair of (rawQueryString ?? '').split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(pair.slice(0, eq).replace(/\+/g, ' '));
      value = decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw new InvalidRecosRequestError('query: not validly URL-encoded');
    }
    if (name !== 'excluded[]' && name !== 'excluded') continue;
    if (value === '') continue;
    // An article guid (as answered in `guid`): what the browser library sends for the other blocks of the page.
    if (GUID.test(value)) {
      out.push(value);
      continue;
    }
    const url = canonicalUrl(value);
    if (!url) throw new InvalidRecosRequestError(`query.excluded[]: "${value.slice(0, 100)}" is neither an absolute http(s) URL nor an article guid`);
    out.push(url);
  }
  if (out.length > MAX_EXCLUDED) throw new InvalidRecosRequestError(`query.excluded[]: at most ${MAX_EXCLUDED} URLs`);
  return out;
}

export interface RecommendationsRequest {
  blockKey: string;
  userId: string;
  rows?: number;
  start?: number;
  shuffle?: boolean;
  redirHttps?: boolean;
  noredir?: boolean;
  format?: Envelope;
  /** The reader id's signature, where the client requires signed ids. */
  sig?: string;
  /** `page_url` parameter, else the referer header. */
  pageUrl?: string;
  referer?: string;
  rawQueryString?: string;
  baseUrl: string;
}

/**
 * A page of a reader's recommendations for a block, in the envelope the
 * request (`format`) or else the block (`envelope` setting) picks, ranked
 * with the settings of the reader's A/B variant (shared/recos/experiments.ts)
 * and identified by a new `recomm_id`. The answer is counted (served, items
 * shown) by one message on the tracking queue, sent before answering.
 */
export async function recommendations(q: RecommendationsRequest) {
  const excluded = excludedUrls(q.rawQueryString);
  const key = await blockKeyItem(q.blockKey);
  if (!key) throw new UnknownBlockKeyError(q.blockKey);
  addLogKeys({ clientId: key.clientId });
  const now = nowSeconds();
  // The client record (site hosts, signed reader ids) comes with the ranking's context, read for every request;
  // nothing is ranked unless the client accepts this reader id.
  let settings: BlockSettings | undefined;
  let variant: Variant | undefined;
  let recommSecret: string | undefined;
  const ranking = await rankingFor(
    store,
    (client) => {
      checkReaderId(client, q.userId, q.sig, 'query.sig');
      recommSecret = client?.recommSecret;
      const block = blockSettings(key, client);
      variant = assignVariant(q.blockKey, q.userId, block.variants);
      return (settings = variantSettings(block, variant));
    },
    { clientId: key.clientId, userId: q.userId, pageUrl: canonicalUrl(q.pageUrl ?? q.referer ?? ''), excluded, now },
  );
  if (!settings) throw new Error('rankingFor returned without the block settings');
  const start = q.start ?? 0;
  const rows = Math.min(q.rows ?? settings.rows, settings.maxRows);
  let page = ranking.slice(start, start + rows);
  if (q.shuffle) page = shuffled(page);
  count('RecommendationsServed', page.length);
  // The cold-start fallback: items that nothing but popularity put there.
  count('RecommendationsFromPopularity', page.filter((r) => !r.pinned && SIGNALS.every((s) => s === 'popularity' || !(r.signals[s] > 0))).length);
  const variantName = variant?.name ?? DEFAULT_VARIANT;
  const counted = countRecos({ clientId: key.clientId, blockKey: q.blockKey, variant: variantName, t: now, served: 1, impressions: page.length, clicks: 0 });
  const secret = recommSecret ?? recommSecrets.get(key.clientId) ?? (await newRecommSecret(key.clientId));
  const links = { baseUrl: q.baseUrl, blockKey: q.blockKey, redirHttps: q.redirHttps ?? false, noredir: q.noredir ?? false, secret };
  const algo = variant?.holdout ? HOLDOUT_ALGO : algoName(page);
  const body = envelope(q.format ?? settings.envelope, page, start, algo, links, settings, { recommId: newRecommId(variantName), variant: variantName });
  await counted;
  return body;
}

/**
 * Where a recommendation click leads: the known article of the block's client within its hosts (else not found), never
 * a URL from the request, so it cannot redirect elsewhere. An allowed click counts on the article and, with a valid
 * `rid`, on the variant's daily counters (one tracking-queue message).
 */
export async function clickTarget(blockKey: string, guid: string, https: boolean, rid?: string): Promise<string> {
  const key = await blockKeyItem(blockKey);
  if (!key) throw new UnknownBlockKeyError(blockKey);
  const [client, [article]] = await Promise.all([getClient(key.clientId), store.articles(key.clientId, [guid])]);
  const settings = blockSettings(key, client);
  if (!article || !hostAllowed(settings, article.url)) throw new UnknownArticleError(guid);
  if (!(await store.recordClick(key.clientId, guid))) throw new UnknownArticleError(guid);
  // Only a link the service signed for this block and article counts, once per answer and article.
  const signed = verifyRid(client?.recommSecret, blockKey, guid, rid);
  const variant = countedVariant(signed?.variant, settings.variants);
  const now = nowSeconds();
  if (variant && (await firstClick(key.clientId, signed!.recommId, guid, now))) {
    await countRecos({ clientId: key.clientId, blockKey, variant, t: now, served: 0, impressions: 0, clicks: 1 });
  }
  return https ? toHttps(article.url) : article.url;
}

/** Sets a reader's theme preferences (replacing them; an empty list clears them). */
export async function setPreferences(clientId: string, userId: string, sig: string | undefined, themes: string[]): Promise<Preferences> {
  checkReaderId(await getClient(clientId), userId, sig, 'query.sig');
  const preferences = { userId, themes, updatedAt: new Date().toISOString() };
  await store.putPreferences(clientId, preferences);
  return preferences;
}

/** A reader's theme preferences; none set reads as an empty list. */
export async function getPreferences(clientId: string, userId: string, sig: string | undefined): Promise<Preferences | { userId: string; themes: string[]; updatedAt: null }> {
  checkReaderId(await getClient(clientId), userId, sig, 'query.sig');
  return (await store.getPreferences(clientId, userId)) ?? { userId, themes: [], updatedAt: null };
}

/**
 * Removes what the service keeps about readers (recent reads, tastes,
 * preferences), e.g. for subscribers deleted by `POST /v1/users/delete`
 * (their guid is their user id). Counts already folded into articles and
 * co-visits are anonymous and stay.
 */
export async function forgetReaders(clientId: string, userIds: string[]): Promise<void> {
  // Not through `store`: bundles that only forget readers (subscriber deletion) leave the store and its copies out.
  await forgetReaderItems(clientId, userIds);
}
