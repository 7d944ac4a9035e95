/** The reader links of the subscriber listings (GET …/lists/{list_id}/subscribers and the deprecated listing). */
import { config } from '../config.js';
import { linkSecretsOf } from './link-secret.js';
import { linkUrl } from './links.js';

/** Adds `unsubscribe_url` and `preferences_url` to each subscriber of a page of list `listId`. */
export async function withReaderLinks<S extends { email: string }>(clientId: string, listId: number, subscribers: S[]): Promise<Array<S & { unsubscribe_url: string; preferences_url: string }>> {
  if (subscribers.length === 0) return [];
  const secrets = (await linkSecretsOf(clientId))!;
  const base = config.publicBaseUrl;
  return subscribers.map((s) => ({
    ...s,
    unsubscribe_url: linkUrl(base, secrets, { kind: 'unsubscribe', clientId, listId, email: s.email }),
    preferences_url: linkUrl(base, secrets, { kind: 'preferences', clientId, email: s.email }),
  }));
}
