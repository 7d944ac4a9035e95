/** The preference centre's lists for a reader (GET: reads only). */
import { publisherOf, type Publisher } from '../clients/branding.js';
import { getClient, type Client } from '../clients/clients.js';
import { batchGet } from '../db/client.js';
import { keys } from '../db/keys.js';
import { listLists } from '../lists/lists.js';
import type { SubscriberItem } from '../subscribers/store.js';
import { checkLink } from './check.js';
import type { PreferenceView } from './pages.js';
import type { PreferencesParams } from './schemas.js';

export interface ReaderList {
  id: number;
  name: string;
  subscribed: boolean;
  /** The reader is in the list (subscribed or not); else a list of a global opt-in form. */
  member: boolean;
}

/**
 * The lists the page shows: every list of the client the reader is in
 * (read by key, strongly consistent), ticked as they stand, plus the lists of
 * the client's global opt-in forms (read from the client item here, not
 * with the link's secret: a form made a moment ago shows at once). A reader in
 * no list (deleted, or never subscribed) is shown no list: the link brings
 * nobody back.
 */
export async function readerLists(clientId: string, email: string): Promise<ReaderList[]> {
  return (await readerView(clientId, email)).lists;
}

/** The reader's lists and the publisher of the page, from one read of the client item. */
export async function readerView(clientId: string, email: string): Promise<{ lists: ReaderList[]; publisher: Publisher }> {
  const [lists, client] = await Promise.all([listLists(clientId), getClient(clientId)]);
  return { lists: await listsOf(clientId, email, lists, client), publisher: publisherOf(client, clientId) };
}

async function listsOf(clientId: string, email: string, lists: Array<{ id: number; name: string }>, client: Client | undefined): Promise<ReaderList[]> {
  const globalFormLists = [...(client?.globalFormLists ?? [])].map(Number);
  const items = await batchGet<SubscriberItem>(lists.map((l) => keys.subscriber(clientId, l.id, email)));
  if (items.length === 0) return [];
  const byList = new Map(items.map((i) => [i.listId, i]));
  return lists
    .filter((l) => byList.has(l.id) || globalFormLists.includes(l.id))
    .map((l) => ({ id: l.id, name: l.name, subscribed: byList.get(l.id)?.subscribed ?? false, member: byList.has(l.id) }));
}

/** The view of the preference centre for a link. */
export async function showPreferences(params: PreferencesParams, sourceIp: string): Promise<PreferenceView | 'invalid'> {
  const link = await checkLink('preferences', params, sourceIp, 'page');
  if (!link) return 'invalid';
  const { clientId, email } = link.target;
  return { email, ...(await readerView(clientId, email)) };
}
