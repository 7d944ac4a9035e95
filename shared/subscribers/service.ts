/**
 * The subscriber service: every path that changes subscribers (list API,
 * deprecated API, CSV import, opt-in confirmation, bounces, deletion) goes
 * through it, so the counters stay exact and every state change is an event.
 */
import { keys } from '../db/keys.js';
import { runPool } from '../db/client.js';
import { getList, listLists } from '../lists/lists.js';
import { forgetPendingOptins } from '../optin/forget.js';
import { forgetReaders } from '../recos/service.js';
import { InvalidSubscriberInputError, PartialDeleteError } from './errors.js';
import { applyLines, CHUNK_MARGIN_MS, deleteSubscribers, LINES_PER_CHUNK } from './writer.js';
import { MAX_ECHO, parseSubscriberLines } from './parse.js';
import { buildReport } from './rules.js';
import { pagePartition, readCounters, readPage, type SubscriberItem } from './store.js';
import type { Report, SubscriberLine } from './types.js';
import { DEFAULT_PAGE, EmailSchema } from './schemas.js';
import * as v from 'valibot';

export { parseSubscriberLine, parseSubscriberLines } from './parse.js';
export { getSubscriber } from './writer.js';

/**
 * How long an API request may write (API Gateway ends a request at 29 s):
 * no chunk starts within CHUNK_MARGIN_MS of it, and the answer says what was applied.
 */
export const API_WRITE_BUDGET_MS = 25_000;

/** Applies lines for an API request (with its time budget); see writer.ts applyLines. */
export function applySubscribers(clientId: string, listId: number, lines: SubscriberLine[]): Promise<Report> {
  return applyLines(clientId, listId, lines, { deadline: Date.now() + API_WRITE_BUDGET_MS });
}

export type StoredSubscriber = SubscriberItem;

/**
 * The list API's POST (spec 4.8): one object or an array; invalid lines are
 * reported and skipped, valid ones applied.
 */
export async function subscribeBatch(clientId: string, listId: number, body: unknown): Promise<Report> {
  await getList(clientId, listId);
  const raws = Array.isArray(body) ? body : [body];
  const { lines, errors } = parseSubscriberLines(raws);
  const report = lines.length > 0 ? await applySubscribers(clientId, listId, lines) : buildReport([], 0, 0, 0, []);
  return { ...report, errors: [...errors, ...report.errors].sort((a, b) => a.line - b.line) };
}

/** One subscriber of a list, or undefined. */

/** The subscriber count of a list (spec 2.5), exact once the table's stream has drained (stream-consumer.ts). */
export async function countSubscribers(clientId: string, listId: number) {
  await getList(clientId, listId);
  const c = await readCounters(clientId, listId);
  return { subscribed: c.subscribed, unsubscribed: c.unsubscribed, cause: { HARD_BOUNCE: c.HARD_BOUNCE, PUBLISHER: c.PUBLISHER, READER: c.READER } };
}

const encodeCursor = (key: Record<string, string>) => Buffer.from(JSON.stringify(key)).toString('base64url');

/**
 * Reads a cursor back into a start key, accepting only a key of this very
 * listing: the list's partition, the sort key of a subscriber matching the
 * search prefix, and for a status listing the matching index key.
 */
function decodeCursor(cursor: string, clientId: string, listId: number, status: 'subscribed' | 'unsubscribed' | undefined, search = ''): Record<string, string> {
  let key: Record<string, unknown> | undefined;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    key = undefined;
  }
  const expectedNames = status ? ['gsi1pk', 'gsi1sk', 'pk', 'sk'] : ['pk', 'sk'];
  const sk = typeof key?.sk === 'string' ? key.sk : '';
  const email = sk.slice(keys.subscriberPrefix().length);
  const ok =
    key !== null &&
    typeof key === 'object' &&
    !Array.isArray(key) &&
    Object.keys(key).sort().join() === expectedNames.join() &&
    Object.values(key).every((value) => typeof value === 'string') &&
    key.pk === keys.subscribersPartition(clientId, listId) &&
    sk.startsWith(keys.subscriberPrefix()) &&
    email.startsWith(search) &&
    (!status || (key.gsi1pk === pagePartition({ clientId, listId, status }).value && key.gsi1sk === email));
  if (!ok) throw new InvalidSubscriberInputError('query.cursor: not a cursor of this listing (use the X-Next-Cursor of the previous page with the same status and search)');
  return key as Record<string, string>;
}

/**
 * A page of a list's subscribers (spec 4.7), by email: `status` filters,
 * `search` is a case-insensitive prefix of the email, `offset`/`count` page;
 * `cursor` continues after the previous page at constant cost.
 */
export async function listSubscribers(
  clientId: string,
  listId: number,
  q: { status?: 'subscribed' | 'unsubscribed'; offset?: number; count?: number; search?: string; cursor?: string },
) {
  await getList(clientId, listId);
  const startKey = q.cursor ? decodeCursor(q.cursor, clientId, listId, q.status, q.search) : undefined;
  const page = await readPage({ clientId, listId, status: q.status, search: q.search, offset: q.offset ?? 0, count: q.count ?? DEFAULT_PAGE, startKey });
  return {
    subscribers: page.items.map((s) => ({ email: s.email, guid: s.guid, subscribed: s.subscribed, subscribed_at: s.subscribedAt ?? null })),
    nextCursor: page.nextKey ? encodeCursor(page.nextKey) : undefined,
  };
}

const clip = (s: string) => (s.length > MAX_ECHO ? `${s.slice(0, MAX_ECHO)}…` : s);
/** A string as a cause shows it: quoted when empty or space-padded, so the cause never ends in an invisible space. */
const echo = (s: string) => (s !== '' && s.trim() === s ? clip(s) : JSON.stringify(clip(s)));

/** A short echo of a bad entry: its type, or a string or number itself. */
function describeEntry(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clip(value));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Deletes users and their data from every list of the client (spec 4.2); any invalid email rejects the whole request
 * first. Each removed subscription becomes an `nl_delete` event (from the table's stream), hence one
 * `subscriber.deleted`. Returns the number of distinct addresses in the request.
 */
export async function deleteUsers(clientId: string, body: unknown[]): Promise<number> {
  const errors: string[] = [];
  const emails = new Set<string>();
  body.forEach((entry) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      errors.push(`an entry must be an {email} object, got ${describeEntry(entry)}`);
      return;
    }
    const raw = (entry as { email?: unknown }).email;
    const parsed = v.safeParse(EmailSchema, raw);
    if (parsed.success) emails.add(parsed.output);
    else errors.push(`email is not valid ${typeof raw === 'string' ? echo(raw) : describeEntry(raw ?? null)}`);
  });
  if (errors.length > 0) {
    const shown = errors.slice(0, 20).join(', ') + (errors.length > 20 ? `, … (${errors.length - 20} more)` : '');
    throw new InvalidSubscriberInputError(`${errors.length} error(s): ${shown}`);
  }
  // Every list of the client, read by key (strongly consistent): an address written a moment ago is seen
  // (the per-email index is eventually consistent).
  const deadline = Date.now() + API_WRITE_BUDGET_MS;
  const lists = (await listLists(clientId)).map((l) => l.id);
  const all = [...emails];
  const chunks: Array<{ listId: number; emails: string[] }> = [];
  for (const listId of lists) {
    for (let i = 0; i < all.length; i += LINES_PER_CHUNK) chunks.push({ listId, emails: all.slice(i, i + LINES_PER_CHUNK) });
  }
  const deleted: SubscriberItem[] = [];
  const unfinished = new Set<string>();
  let failure: unknown;
  await runPool(chunks, 4, async ({ listId, emails: group }) => {
    if (failure === undefined && Date.now() > deadline - CHUNK_MARGIN_MS) failure = 'time';
    if (failure === undefined) {
      try {
        await deleteSubscribers(clientId, listId, group, deleted);
        return;
      } catch (err) {
        failure ??= err;
      }
    }
    for (const email of group) unfinished.add(email);
  });
  // The guid is also the reader id of recommendations (spec 2.3): their reading history goes too (under the
  // guids the addresses had before as well), and so do pending opt-ins (no reminder, and an old confirmation
  // link subscribes nobody).
  const guids = [...new Set(deleted.flatMap((item) => [item.guid, ...(item.previousGuids ?? [])]))];
  if (guids.length > 0) await forgetReaders(clientId, guids);
  const done = all.filter((email) => !unfinished.has(email));
  if (done.length > 0) await forgetPendingOptins(clientId, done);
  if (failure !== undefined) {
    const deletedLists = [...new Set(deleted.map((item) => item.listId))].sort((a, b) => a - b);
    throw new PartialDeleteError(deleted.length, done.length, deletedLists, failure === 'time' ? 'time' : 'storage', failure === 'time' ? undefined : { cause: failure });
  }
  return emails.size;
}
