/**
 * The catalogue feed job: polls each client's feed conditionally through the SSRF-safe fetch and upserts its
 * articles. A failing feed keeps the catalogue it gave last; the failure is recorded on the client and counted
 * (`CatalogueFeedFailures`).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, queryAll, runPool, tableName } from '../db/client.js';
import { CLIENTS_WITH_FEED, keys } from '../db/keys.js';
import { requireClient, setSiteHosts, type CatalogueFeed, type Client } from '../clients/clients.js';
import { storedSiteHosts } from '../clients/site-hosts.js';
import { config } from '../config.js';
import { checkUrl, safeFetch, UrlFetchError } from '../net/safe-fetch.js';
import { count, logger } from '../observability/index.js';
import { upsertArticles } from './catalogue.js';
import { FeedFormatError, parseFeed } from './feed.js';

/** Limits of one feed poll. */
export const FEED_LIMITS = { maxBytes: 5 * 1024 * 1024, timeoutMs: 20_000, connectTimeoutMs: 5_000, maxRedirects: 3, concurrency: 4 };

/**
 * Sets the client's catalogue feed (an http(s) URL, checked again at every
 * poll by the SSRF-safe fetch), or turns it off with `undefined`. A new URL
 * starts with no validators and no history.
 */
export async function setFeed(clientId: string, url: string | undefined): Promise<CatalogueFeed | undefined> {
  await requireClient(clientId);
  if (url === undefined) {
    await ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.client(clientId), UpdateExpression: 'REMOVE feed, gsi1pk, gsi1sk' }));
    return undefined;
  }
  const feed: CatalogueFeed = { url: checkUrl(url.trim(), { allowLoopback: config.feedAllowLoopback }).href, setAt: new Date().toISOString() };
  const index = keys.clientWithFeed(clientId);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET feed = :f, gsi1pk = :p, gsi1sk = :s',
      ExpressionAttributeValues: { ':f': feed, ':p': index.gsi1pk, ':s': index.gsi1sk },
    }),
  );
  return feed;
}

/**
 * Replaces the client's site hosts (admin `set-hosts`) and forgets its
 * feed's validators (ETag, Last-Modified), so the next poll reads the whole
 * document again: items refused for their host are applied once it is
 * allowed, although the feed itself has not changed (it would answer 304).
 */
export async function setSiteHostsAndRereadFeed(clientId: string, siteHosts: string | string[]): Promise<string[]> {
  const hosts = await setSiteHosts(clientId, siteHosts);
  try {
    await ddb.send(
      new UpdateCommand({ TableName: tableName(), Key: keys.client(clientId), UpdateExpression: 'REMOVE feed.etag, feed.lastModified', ConditionExpression: 'attribute_exists(feed)' }),
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
  return hosts;
}

/** Records the outcome of a feed poll (an undefined field is removed), unless the feed was changed or turned off meanwhile. */
export async function recordFeedPoll(clientId: string, url: string, outcome: Partial<CatalogueFeed>): Promise<void> {
  const entries = Object.entries(outcome).filter(([name]) => name !== 'url' && name !== 'setAt');
  if (entries.length === 0) return;
  const set = entries.flatMap(([, value], i) => (value === undefined ? [] : [`feed.#f${i} = :v${i}`]));
  const remove = entries.flatMap(([, value], i) => (value === undefined ? [`feed.#f${i}`] : []));
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.client(clientId),
        UpdateExpression: [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : ''].join(' ').trim(),
        ConditionExpression: 'feed.#url = :url',
        ExpressionAttributeNames: { '#url': 'url', ...Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])) },
        ExpressionAttributeValues: { ':url': url, ...Object.fromEntries(entries.flatMap(([, value], i) => (value === undefined ? [] : [[`:v${i}`, value]]))) },
      }),
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
}

const ACCEPT = 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5';

/** The document's text, in the charset its Content-Type or XML declaration names (UTF-8 otherwise). */
function decode(bytes: Buffer, contentType: string | undefined): string {
  const declared = /charset=["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ?? /^<\?xml[^>]*encoding=["']([\w.:-]+)["']/i.exec(bytes.subarray(0, 200).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export type PollOutcome = 'ok' | 'not-modified' | 'failed';

/** The cause recorded for a document the parser failed on without saying why (its error is logged). */
export const UNREADABLE_FEED = 'the document could not be read as a feed (the parser failed on it; the detail is logged)';

/** Polls one client's feed and records the outcome on the client. Never throws for the feed's own faults. */
export async function pollFeed(client: Pick<Client, 'id' | 'siteHosts' | 'feed'>, now = new Date()): Promise<PollOutcome> {
  const feed = client.feed;
  if (!feed) return 'not-modified';
  const at = now.toISOString();
  const fail = async (cause: string, detail?: unknown) => {
    count('CatalogueFeedFailures');
    logger.warn('catalogue feed failed', { clientId: client.id, cause, detail });
    await recordFeedPoll(client.id, feed.url, { lastPollAt: at, lastStatus: 'failed', lastError: cause, consecutiveFailures: (feed.consecutiveFailures ?? 0) + 1 });
    return 'failed' as const;
  };
  const siteHosts = storedSiteHosts(client.siteHosts);
  if (siteHosts.length === 0) return fail("the client has no site hosts, so no article can be added (support sets them: admin set-hosts)");
  const headers: Record<string, string> = { accept: ACCEPT };
  if (feed.etag) headers['if-none-match'] = feed.etag;
  if (feed.lastModified) headers['if-modified-since'] = feed.lastModified;
  let xml: string;
  let documentUrl: string;
  let validators: Pick<CatalogueFeed, 'etag' | 'lastModified'>;
  try {
    const fetched = await safeFetch(feed.url, { ...FEED_LIMITS, allowLoopback: config.feedAllowLoopback, headers, sizeLimitName: 'the feed limit' });
    if (fetched.status === 304) {
      await recordFeedPoll(client.id, feed.url, { lastPollAt: at, lastStatus: 'not-modified', lastError: undefined, lastSuccessAt: at, consecutiveFailures: 0 });
      return 'not-modified';
    }
    const chunks: Buffer[] = [];
    for await (const chunk of fetched.body) chunks.push(chunk as Buffer);
    xml = decode(Buffer.concat(chunks), fetched.contentType);
    validators = { etag: fetched.etag, lastModified: fetched.lastModified };
    documentUrl = fetched.url.href;
  } catch (err) {
    if (err instanceof UrlFetchError) return fail(`feed ${err.message}`, err.detail);
    throw err;
  }
  let parsed;
  try {
    parsed = parseFeed(xml, documentUrl);
  } catch (err) {
    // Whatever a document makes the parser throw is that feed's failure, never the run's: the other feeds are polled and the job succeeds.
    if (err instanceof FeedFormatError) return fail(`feed: ${err.message}`, (err.cause as Error | undefined)?.message);
    logger.error('catalogue feed document not read: an unexpected parser error', { clientId: client.id, error: err as Error });
    return fail(`feed: ${UNREADABLE_FEED}`);
  }
  const report = await upsertArticles(client.id, siteHosts, parsed.lines, { where: 'feed.items', revive: false });
  await recordFeedPoll(client.id, feed.url, {
    ...validators,
    lastPollAt: at,
    lastStatus: 'ok',
    lastError: undefined,
    firstRejection: report.lines.find((l) => l.status === 'rejected')?.cause,
    lastSuccessAt: at,
    consecutiveFailures: 0,
    lastFormat: parsed.format,
    lastCounts: { created: report.created, updated: report.updated, rejected: report.rejected },
  });
  return 'ok';
}

/** The feed job: polls every client that has a feed, a few at a time. */
export async function pollFeeds(now = new Date()): Promise<Record<PollOutcome, number> & { clients: number }> {
  const clients = await queryAll<Client>({ TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': CLIENTS_WITH_FEED } });
  const summary = { clients: clients.length, ok: 0, 'not-modified': 0, failed: 0 };
  let fault: Error | undefined;
  await runPool(clients, FEED_LIMITS.concurrency, async (client) => {
    try {
      summary[await pollFeed(client, now)]++;
    } catch (err) {
      // Not the feed's fault (storage, a bug): the other feeds are still polled, this one shows a failure, and the run fails at the end.
      fault ??= err as Error;
      summary.failed++;
      count('CatalogueFeedFailures');
      logger.error('catalogue feed poll failed on our side', { clientId: client.id, error: err as Error });
      const cause = 'an internal error while applying the feed (not the feed\'s fault); it has been logged and the next poll tries again';
      await recordFeedPoll(client.id, client.feed!.url, { lastPollAt: now.toISOString(), lastStatus: 'failed', lastError: cause, consecutiveFailures: (client.feed?.consecutiveFailures ?? 0) + 1 }).catch(
        (recordErr: unknown) => logger.error('catalogue feed poll outcome not recorded', { clientId: client.id, error: recordErr as Error }),
      );
    }
  });
  if (fault) throw fault;
  return summary;
}
