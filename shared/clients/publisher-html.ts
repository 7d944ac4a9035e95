/**
 * The publisher's frame around reader pages and opt-in emails: a header with
 * its logo and name, its colour on the header and buttons (with black or
 * white text, whichever contrasts more), a footer with its postal address and
 * privacy policy. Every value is escaped; the colour is a checked #rrggbb.
 */
import { escapeHtml as e } from '../mail/html.js';
import { textColourOn, type Publisher } from './branding.js';

/** The CSP of every page made here: inline style only, images over https only (the publisher's logo), forms to the page itself. */
export const PUBLISHER_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const BASE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:0 auto;padding:0 1rem 2rem;line-height:1.5;color:#1a1a1a;background:#fff;overflow-wrap:anywhere}' +
  'button{font:inherit;padding:.5em 1.2em;margin:.3em .5em .3em 0;cursor:pointer;border:1px solid #767676;border-radius:4px}' +
  'button:focus,input:focus,a:focus{outline:3px solid #1a5fb4;outline-offset:2px}' +
  'fieldset{border:1px solid #999;padding:.5em 1em}label{display:block;padding:.25em 0}.note{color:#444}' +
  '.publisher{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem;margin:0 -1rem 1.5rem;padding:.75rem 1rem;border-bottom:1px solid #ccc}' +
  '.publisher img{max-height:3rem;max-width:100%;height:auto}.publisher .name{font-weight:600;font-size:1.1rem}' +
  'footer{margin-top:2.5rem;padding-top:1rem;border-top:1px solid #ccc;color:#444;font-size:.9rem}footer address{font-style:normal;white-space:pre-line}';

function colourStyle(p: Publisher | undefined): string {
  if (!p?.brandColour) return '';
  const ink = textColourOn(p.brandColour);
  return `.publisher{background:${p.brandColour};color:${ink};border-bottom-color:${p.brandColour}}button{background:${p.brandColour};color:${ink}}`;
}

const logo = (p: Publisher) => (p.logoUrl ? `<img src="${e(p.logoUrl)}" alt="" referrerpolicy="no-referrer">` : '');

/** A whole page: `body` is HTML made by the caller (escaped there); without a publisher (a link that is not valid), a page without frame. */
export function publisherPage(title: string, body: string, publisher?: Publisher): string {
  const header = publisher ? `<header class="publisher">${logo(publisher)}<span class="name">${e(publisher.name)}</span></header>` : '';
  const footerParts = publisher
    ? [publisher.postalAddress ? `<address>${e(publisher.postalAddress)}</address>` : '', publisher.privacyUrl ? `<p><a href="${e(publisher.privacyUrl)}">Privacy policy of ${e(publisher.name)}</a></p>` : ''].filter(Boolean)
    : [];
  const footer = footerParts.length > 0 ? `<footer>${footerParts.join('')}</footer>` : '';
  const fullTitle = publisher ? `${title} – ${publisher.name}` : title;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${e(fullTitle)}</title><style>${BASE_STYLE}${colourStyle(publisher)}</style></head>
<body>${header}<main><h1>${e(title)}</h1>${body}</main>${footer}</body></html>`;
}

/** The HTML email's header (logo and name) and footer (address, privacy policy), and its button colours. */
export function publisherEmailParts(p: Publisher): { header: string; footer: string; button: { background: string; color: string } } {
  const background = p.brandColour ?? '#1a5fb4';
  const header = `<p style="margin:0 0 1em;padding:.75em 1em;${p.brandColour ? `background:${p.brandColour};color:${textColourOn(p.brandColour)};` : 'border-bottom:1px solid #ccc;'}font-weight:bold">${p.logoUrl ? `<img src="${e(p.logoUrl)}" alt="" style="max-height:48px;vertical-align:middle;margin-right:.5em">` : ''}${e(p.name)}</p>`;
  const lines = [p.postalAddress ? `<p style="white-space:pre-line;margin:0">${e(p.postalAddress)}</p>` : '', p.privacyUrl ? `<p><a href="${e(p.privacyUrl)}">Privacy policy of ${e(p.name)}</a></p>` : ''].filter(Boolean);
  const footer = lines.length > 0 ? `<hr><div style="color:#555;font-size:.9em">${lines.join('')}</div>` : '';
  return { header, footer, button: { background, color: textColourOn(background) } };
}

/** The text email's footer lines (empty without address or privacy policy). */
export function publisherTextFooter(p: Publisher): string[] {
  const lines = [...(p.postalAddress ? [p.name, ...p.postalAddress.split('\n')] : []), ...(p.privacyUrl ? [`Privacy policy: ${p.privacyUrl}`] : [])];
  return lines.length > 0 ? ['--', ...lines, ''] : [];
}
