/**
 * The confirmation and reminder emails, and the page the confirmation link
 * shows, in the publisher's frame (shared/clients/publisher-html.ts). Every
 * value that comes from a client or a reader is escaped in the HTML part;
 * headers carry only the recipient and a fixed subject (MailComposer encodes them).
 */
import type { Publisher } from '../clients/branding.js';
import { publisherEmailParts, publisherPage, publisherTextFooter } from '../clients/publisher-html.js';
import { escapeHtml } from '../mail/html.js';
import type { MailMessage } from '../mail/mailer.js';

export interface ConfirmationEmailInput {
  to: string;
  /** The publisher (client) shown to the reader. */
  publisher: Publisher;
  link: string;
  expiresAt: string;
  reminder: boolean;
}

export function confirmationEmail(input: ConfirmationEmailInput): MailMessage {
  // Nothing the form sent is shown: until the address confirms, anyone may have typed it,
  // and the mail must not carry a stranger's words to that inbox.
  const greeting = 'Hello,';
  const name = input.publisher.name;
  const lead = input.reminder
    ? `You asked to subscribe to the newsletter of ${name} a few days ago, but the subscription is not confirmed yet.`
    : `Thank you for subscribing to the newsletter of ${name}.`;
  const expires = input.expiresAt.slice(0, 10);
  const subject = input.reminder ? 'Reminder: please confirm your subscription' : 'Please confirm your subscription';
  const text = [
    greeting,
    '',
    lead,
    'Please confirm your subscription by opening this link:',
    '',
    input.link,
    '',
    `The link is valid until ${expires}. If you did not ask for this, ignore this email: you will not be subscribed.`,
    '',
    ...publisherTextFooter(input.publisher),
  ].join('\n');
  const e = escapeHtml;
  const frame = publisherEmailParts(input.publisher);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${e(subject)}</title></head><body style="font-family:sans-serif">
${frame.header}
<p>${e(greeting)}</p>
<p>${e(lead)}</p>
<p><a href="${e(input.link)}" style="display:inline-block;padding:.6em 1.2em;background:${frame.button.background};color:${frame.button.color};text-decoration:none;border-radius:4px">Confirm my subscription</a></p>
<p>Or copy this address into your browser: ${e(input.link)}</p>
<p style="color:#555">The link is valid until ${e(expires)}. If you did not ask for this, ignore this email: you will not be subscribed.</p>
${frame.footer}
</body></html>`;
  return { to: input.to, subject, text, html };
}

/** The small page the confirmation link shows when the form has no redirect URL (no publisher: a link that is not valid). */
export function confirmationPage(outcome: 'confirmed' | 'already' | 'invalid', publisher?: Publisher): { status: number; html: string } {
  const [status, title, message] =
    outcome === 'confirmed'
      ? [200, 'Subscription confirmed', `Your subscription${publisher ? ` to the newsletter of ${publisher.name}` : ''} is confirmed. Thank you!`]
      : outcome === 'already'
        ? [200, 'Already confirmed', 'This subscription is already confirmed. There is nothing more to do.']
        : [404, 'Link not valid', 'This confirmation link is not valid or has expired. Please subscribe again from the form.'];
  return { status, html: publisherPage(title, `<p>${escapeHtml(message)}</p>`, outcome === 'invalid' ? undefined : publisher) };
}
