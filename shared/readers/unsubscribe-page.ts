/** GET of an unsubscribe link: shows what the link would do; reads only, writes nothing (mail scanners fetch links). */
import { publisherOf } from '../clients/branding.js';
import { getClient } from '../clients/clients.js';
import { config } from '../config.js';
import { getList } from '../lists/lists.js';
import { readSubscribers } from '../subscribers/store.js';
import { checkLink } from './check.js';
import { linkUrl, type LinkSecrets } from './links.js';
import type { UnsubscribeView } from './pages.js';
import type { UnsubscribeParams } from './schemas.js';

/** The view of the unsubscribe page for a link. */
export async function showUnsubscribe(params: UnsubscribeParams, sourceIp: string): Promise<UnsubscribeView> {
  const link = await checkLink('unsubscribe', params, sourceIp, 'page');
  if (!link) return { state: 'invalid' };
  return viewOf(link.target, link.secrets, false);
}

/** The page's view of an address on a list (`done`: unsubscribed by this request). */
export async function viewOf(target: { clientId: string; listId: number; email: string }, secrets: LinkSecrets, done: boolean): Promise<UnsubscribeView> {
  const { clientId, listId, email } = target;
  const [list, client] = await Promise.all([getList(clientId, listId).catch(() => undefined), getClient(clientId)]);
  const publisher = publisherOf(client, clientId);
  const item = list ? (await readSubscribers(clientId, listId, [email])).get(email) : undefined;
  if (!list || !item) return { state: 'unknown', publisher };
  const preferencesUrl = linkUrl(config.publicBaseUrl, secrets, { kind: 'preferences', clientId, email });
  return { state: done ? 'done' : item.subscribed ? 'subscribed' : 'unsubscribed', listName: list.name, email, preferencesUrl, publisher };
}
