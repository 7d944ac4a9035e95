/**
 * POST of the preference centre: applies each change through the subscriber
 * service (unticked: unsubscribed, cause READER; ticked: subscribed again, or
 * subscribed to a list of a global form), each with a consent record of
 * source `preferences`. Only the lists the page shows can change.
 */
import { runPool } from '../db/client.js';
import { applySubscribers } from '../subscribers/index.js';
import type { SubscriberLine } from '../subscribers/types.js';
import { checkLink } from './check.js';
/** A form's fields by name, every value of a repeated field (shared/http/form-body.ts). */
type FormFields = Map<string, string[]>;
import type { PreferenceView } from './pages.js';
import { readerLists, readerView } from './preferences-page.js';
import type { PreferencesParams } from './schemas.js';
import { READER_WRITE_BUDGET_MS } from './unsubscribe.js';

/** Saves the reader's choices (`action=unsubscribe_all`: leaves every list); the view after. */
export async function savePreferences(params: PreferencesParams, fields: FormFields, from: { ip: string; userAgent?: string }): Promise<PreferenceView | 'invalid'> {
  const link = await checkLink('preferences', params, from.ip, 'change');
  if (!link) return 'invalid';
  const { clientId, email } = link.target;
  const all = fields.get('action')?.[0] === 'unsubscribe_all';
  const ticked = new Set(fields.get('list') ?? []);
  const lists = await readerLists(clientId, email);
  const consent = { source: 'preferences' as const, ip: from.ip || undefined, user_agent: from.userAgent?.slice(0, 256) || undefined };
  const deadline = Date.now() + READER_WRITE_BUDGET_MS;
  const changes = lists.flatMap((l): Array<{ listId: number; line: SubscriberLine }> => {
    const want = !all && ticked.has(String(l.id));
    if (want === l.subscribed) return [];
    const line: SubscriberLine = want
      ? { line: 1, email, subscribed: true, consent }
      : { line: 1, email, subscribed: false, unsubscribedCause: 'READER', onlyExisting: true, consent };
    return [{ listId: l.id, line }];
  });
  await runPool(changes, 4, async ({ listId, line }) => void (await applySubscribers(clientId, listId, [line], { deadline })));
  return { email, ...(await readerView(clientId, email)), saved: all ? 'all' : 'saved' };
}
