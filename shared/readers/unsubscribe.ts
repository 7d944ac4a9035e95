/**
 * POST of an unsubscribe link: RFC 8058 one-click (`List-Unsubscribe=One-Click`,
 * urlencoded or multipart), also what the page's button posts. Unsubscribes
 * through the subscriber service (cause READER, exact counts, one
 * nl_unsubscribe event, a consent record), only an address still on the
 * list: a deleted reader's link never brings them back. Repeating it changes nothing.
 */
import { applySubscribers } from '../subscribers/index.js';
import { checkLink } from './check.js';
/** A form's fields by name, every value of a repeated field (shared/http/form-body.ts). */
type FormFields = Map<string, string[]>;
import type { UnsubscribeView } from './pages.js';
import type { UnsubscribeParams } from './schemas.js';
import { viewOf } from './unsubscribe-page.js';

/** How long a reader's write may take (API Gateway ends the request at 29 s). */
export const READER_WRITE_BUDGET_MS = 20_000;

/** True for an RFC 8058 one-click body. */
export const isOneClick = (fields: FormFields | undefined) => fields?.get('List-Unsubscribe')?.includes('One-Click') === true;

/** Unsubscribes the link's address from the link's list; the view of the page to answer with. */
export async function unsubscribeByLink(params: UnsubscribeParams, from: { ip: string; userAgent?: string }): Promise<UnsubscribeView> {
  const link = await checkLink('unsubscribe', params, from.ip, 'change');
  if (!link) return { state: 'invalid' };
  const { clientId, listId, email } = link.target;
  const report = await applySubscribers(
    clientId,
    listId,
    [{ line: 1, email, subscribed: false, unsubscribedCause: 'READER', onlyExisting: true, consent: { source: 'unsubscribe_link', ip: from.ip || undefined, user_agent: from.userAgent?.slice(0, 256) || undefined } }],
    { deadline: Date.now() + READER_WRITE_BUDGET_MS },
  );
  return viewOf(link.target, link.secrets, report.nb_unsubscribed > 0);
}
