/**
 * Newsletter picks: each subscribed member's recommendations for one block (`rankingFor`, no current page, the member's
 * guid as reader), linked through the block's signed redirects so a click counts for its `newsletter` statistics.
 * Calls per page of members: docs/capacity.md "Newsletter picks".
 */
import { recommSecretOf, resolvePublicKey, type BlockKey } from '../clients/clients.js';
import { runPool } from '../db/client.js';
import { getList } from '../lists/lists.js';
import { redirectUrl } from '../recos/envelope.js';
import { newRecommId, NEWSLETTER_VARIANT } from '../recos/experiments.js';
import { memberRecommId } from '../recos/recomm-ids.js';
import { enqueueRecoCount } from '../recos/view-queue.js';
import { UnknownBlockKeyError } from '../recos/errors.js';
import { rankingFor } from '../recos/recommend.js';
import { blockSettings } from '../recos/settings.js';
import { subscribedPage, type Member } from '../subscribers/index.js';
import { PicksStore } from './batch-store.js';
import { MAX_PICKS_ROWS } from './schemas.js';

/** Members read (and ranked) per page. */
export const PAGE_MEMBERS = 500;
/** Members ranked at once within a page (their occasional co-read reads overlap). */
const RANK_CONCURRENCY = 8;

/** One pick: an article of the block for this member, linked through the block's redirect. */
export interface Pick {
  guid: string;
  url: string;
  title: string;
  desc: string;
  image: string;
  category: string;
  published_time: number;
}

/** One line of the answer: a subscribed member and their picks. */
export interface PicksLine {
  email: string;
  guid: string;
  recommendations: Pick[];
}

/** A checked request: the client's list and block, the picks per member and the rid of its links. */
export interface PicksPlan {
  clientId: string;
  listId: number;
  blockKey: string;
  rows: number;
  rid: string;
}

/** The block key item of this client (another client's or an unknown key: UnknownBlockKeyError, 404). */
export async function clientBlock(clientId: string, blockKey: string): Promise<BlockKey> {
  const key = await resolvePublicKey('block', blockKey);
  if (!key || key.clientId !== clientId) throw new UnknownBlockKeyError(blockKey);
  return key;
}

/** Checks the list and the block belong to the client and makes the request's plan (one rid per request; its members' ids derive from it). */
export async function planPicks(clientId: string, listId: number, blockKey: string, rows: number | undefined): Promise<PicksPlan> {
  const [key] = await Promise.all([clientBlock(clientId, blockKey), getList(clientId, listId)]);
  const blockRows = blockSettings(key, undefined).rows;
  return { clientId, listId, blockKey, rows: Math.min(rows ?? blockRows, MAX_PICKS_ROWS), rid: newRecommId(NEWSLETTER_VARIANT) };
}

export interface RunOptions {
  /** Continue after this member key (a job's checkpoint). */
  startKey?: Record<string, string>;
  /** Receives each page's lines, in list order (by email); awaited before the next page is emitted. */
  emit: (lines: PicksLine[]) => Promise<void> | void;
  /** Asked after each page: true stops the run there (the result then says where to continue). */
  stop?: () => boolean;
  /** The public address of the redirects ({recos_url}). */
  baseUrl: string;
  pageMembers?: number;
  /** The store (tests and the benchmark read its counts). */
  store?: PicksStore;
}

/**
 * A page's picks as impressions of the newsletter variant, so that its clicks never outnumber them (a page run again
 * counts again): messages of at most 1,000 impressions, the most one count message carries.
 */
async function countImpressions(plan: PicksPlan, lines: PicksLine[], now: number): Promise<void> {
  let served = 0;
  let impressions = 0;
  const send = async () => {
    if (impressions > 0) await enqueueRecoCount({ clientId: plan.clientId, blockKey: plan.blockKey, variant: NEWSLETTER_VARIANT, t: now, served, impressions, clicks: 0 });
    served = impressions = 0;
  };
  for (const line of lines) {
    if (impressions + line.recommendations.length > 1000) await send();
    served++;
    impressions += line.recommendations.length;
  }
  await send();
}

/**
 * Ranks the list's subscribed members page by page (the next page's members and readers are read while the current
 * one is ranked) and emits their lines. Returns how many members it emitted and, when stopped before the end, the
 * key to continue after.
 */
export async function runPicks(plan: PicksPlan, o: RunOptions): Promise<{ members: number; nextKey?: Record<string, string> }> {
  const key = await clientBlock(plan.clientId, plan.blockKey);
  const store = o.store ?? new PicksStore(plan.clientId);
  const pageMembers = o.pageMembers ?? PAGE_MEMBERS;
  const links = { baseUrl: o.baseUrl, blockKey: plan.blockKey, redirHttps: false, recommId: plan.rid };
  // A page: its members and their readers' records, read together while the previous page is ranked.
  const readPage = async (startKey: Record<string, string> | undefined) => {
    const page = await subscribedPage(plan.clientId, plan.listId, pageMembers, startKey);
    return { ...page, readers: await store.readReaders(page.members.map((m) => m.guid)) };
  };
  let members = 0;
  let next = readPage(o.startKey);
  for (;;) {
    const page = await next;
    if (page.nextKey) next = readPage(page.nextKey);
    store.useReaders(page.readers);
    const { client } = await store.sharedContext();
    const settings = blockSettings(key, client);
    const secret = client?.recommSecret ?? (await recommSecretOf({ id: plan.clientId }));
    const now = Math.floor(Date.now() / 1000);
    const lines = new Array<PicksLine>(page.members.length);
    await runPool(page.members, RANK_CONCURRENCY, async (member: Member, i) => {
      const ranking = await rankingFor(store, settings, { clientId: plan.clientId, userId: member.guid, excluded: [], now });
      lines[i] = {
        email: member.email,
        guid: member.guid,
        recommendations: ranking.slice(0, plan.rows).map(({ article: a }) => ({
          guid: a.guid,
          url: redirectUrl({ ...links, recommId: memberRecommId(secret, plan.rid, member.guid), secret }, a.guid),
          title: a.title,
          desc: a.desc,
          image: a.image,
          category: a.category,
          published_time: a.published,
        })),
      };
    });
    await o.emit(lines);
    await countImpressions(plan, lines, now);
    members += lines.length;
    if (!page.nextKey) return { members };
    if (o.stop?.()) {
      // The page read ahead is dropped; the next run reads it again from the key.
      next.catch(() => undefined);
      return { members, nextKey: page.nextKey };
    }
  }
}
