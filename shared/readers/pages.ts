/**
 * The reader pages (unsubscribe link, preference centre): small server-made
 * HTML that works without JavaScript. Every value shown is escaped; the forms
 * post to the page's own address (the link's token is the authority, see
 * docs/security.md, "Reader links and CSRF").
 */
import type { Publisher } from '../clients/branding.js';
import { PUBLISHER_PAGE_CSP, publisherPage as page } from '../clients/publisher-html.js';
import { escapeHtml as e } from '../mail/html.js';

/** Headers of every reader page: personal and one-off, no referrer (the link carries its token), nothing loaded from elsewhere but an https logo, no framing. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex',
  'content-security-policy': PUBLISHER_PAGE_CSP,
};

/** The address partly masked: the first character of the local part, then the domain (`j***@example.com`). */
export function maskAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, Math.min(1, at))}***${email.slice(at)}`;
}

export type UnsubscribeView =
  | { state: 'invalid' }
  | { state: 'unknown'; publisher: Publisher }
  | { state: 'subscribed' | 'unsubscribed' | 'done'; listName: string; email: string; preferencesUrl: string; publisher: Publisher };

/** The unsubscribe link's page: a confirm button (GET), or what is now true (after the POST, or already). */
export function unsubscribePage(view: UnsubscribeView): string {
  if (view.state === 'invalid') return page('Link not valid', '<p>This link is not valid. Please use the most recent link from the newsletter.</p>');
  // A deleted reader, or an address never on the list: the same neutral answer, nothing to do.
  if (view.state === 'unknown') return page('Nothing to change', '<p>This address is not subscribed to this newsletter. There is nothing to do.</p>', view.publisher);
  const who = `<strong>${e(maskAddress(view.email))}</strong>`;
  const list = `<strong>${e(view.listName)}</strong>`;
  const prefs = `<p class="note"><a href="${e(view.preferencesUrl)}">Manage all your subscriptions</a></p>`;
  if (view.state === 'subscribed') {
    return page(
      'Unsubscribe',
      `<p>Unsubscribe ${who} from ${list}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>${prefs}`,
      view.publisher,
    );
  }
  const title = view.state === 'done' ? 'You are unsubscribed' : 'Already unsubscribed';
  return page(title, `<p role="status">${who} no longer receives ${list}.</p>${prefs}`, view.publisher);
}

export interface PreferenceView {
  email: string;
  lists: Array<{ id: number; name: string; subscribed: boolean }>;
  publisher: Publisher;
  /** After a POST: what was done. */
  saved?: 'saved' | 'all';
}

/** The preference centre: one checkbox per list (labelled), save, and one button to leave every list. */
export function preferencesPage(view: PreferenceView | 'invalid'): string {
  if (view === 'invalid') return page('Link not valid', '<p>This link is not valid. Please use the most recent link from the newsletter.</p>');
  const status =
    view.saved === 'all'
      ? '<p role="status">You are unsubscribed from every newsletter below.</p>'
      : view.saved === 'saved'
        ? '<p role="status">Your preferences are saved.</p>'
        : '';
  if (view.lists.length === 0) return page('Your subscriptions', `${status}<p>This address is not subscribed to any newsletter of this publisher.</p>`, view.publisher);
  const boxes = view.lists
    .map((l) => `<label><input type="checkbox" name="list" value="${l.id}"${l.subscribed ? ' checked' : ''}> ${e(l.name)}</label>`)
    .join('\n');
  return page(
    'Your subscriptions',
    `${status}<p>Newsletters for <strong>${e(maskAddress(view.email))}</strong>:</p>
<form method="post"><fieldset><legend>Ticked: you receive it</legend>
${boxes}
</fieldset><button type="submit" name="action" value="save">Save my choices</button><button type="submit" name="action" value="unsubscribe_all">Unsubscribe from everything</button></form>`,
    view.publisher,
  );
}

/** The answer to a POST whose body is not what the page sends: nothing changed. */
export function notAFormPage(what: string): string {
  return page('Nothing was changed', `<p>${e(what)}</p>`);
}
