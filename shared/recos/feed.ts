/**
 * Reads a publisher's catalogue feed: RSS 2.0, RSS 1.0 (RDF), Atom and XML
 * sitemaps with the Google News (and image) extension, parsed by
 * fast-xml-parser (validated first); the item fields are read from its
 * nodes here. The result is article lines in the shape `PUT /v1/articles`
 * accepts; they are validated the same way.
 *
 * Not @extractus/feed-extractor: its normaliser strips tags from every
 * description with a regex that takes quadratic time on hostile text (a
 * description of 50,000 `<!--` took 0.6 s, a megabyte of them minutes,
 * stalling the job for every client), and its entries were only a fallback
 * (the first `<link>` whatever its rel, relative links dropped, entities
 * kept), so the fields were read from the raw nodes anyway.
 */
import { decodeHTML } from 'entities';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { toUnixSeconds } from './schemas.js';
import { LIMITS } from './limits.js';
import { canonicalUrl } from './urls.js';

export type FeedFormat = 'rss' | 'atom' | 'sitemap';

/** Most articles read from one feed document (the newest ones are usually first). */
export const MAX_FEED_ARTICLES = 1000;

/** The catalogue's limits on an article's text (`PUT /v1/articles`). */
export const FEED_TEXT_LIMITS = { title: 500, description: 2000, category: 200, theme: 64, url: 2048 } as const;

/** A feed that is not one of the formats read, or not well-formed XML. */
export class FeedFormatError extends Error {}

type Raw = Record<string, unknown>;

/** An article line: what `PUT /v1/articles` takes for one article (fields without a value are left out). */
export interface FeedLine {
  url?: string;
  title?: string;
  description?: string;
  image?: string;
  category?: string;
  themes?: string[];
  published_time?: string;
}

/**
 * Both parsers keep tag values as text: by default fast-xml-parser turns
 * `<title>007</title>` into the number 7 and `1.50` into 1.5.
 */
const XML_OPTIONS = { ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, parseAttributeValue: false, trimValues: true } as const;

const asArray = (value: unknown): unknown[] => (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]);

const isObject = (value: unknown): value is Raw => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of an XML node as fast-xml-parser gives it: a string, or `{'#text': …}` when it has attributes; the first of repeated nodes. */
function text(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(text).find((t) => t !== undefined);
  if (typeof value === 'string') return value.trim() || undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isObject(value) && '#text' in value) return text(value['#text']);
  return undefined;
}

/** All the text inside a node (the markup of Atom `type="xhtml"` text), attributes left out. */
function allText(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return text(value);
  const parts = (Array.isArray(value) ? value : isObject(value) ? Object.entries(value).filter(([k]) => !k.startsWith('@_')).map(([, v]) => v) : []).map(allText);
  return parts.filter(Boolean).join(' ') || undefined;
}

const attr = (node: unknown, name: string): string | undefined => (isObject(node) ? text(node[`@_${name}`]) : undefined);

/** HTML character references decoded (the `entities` package: the WHATWG list, numeric references included). */
const decodeEntities = (s: string): string => decodeHTML(s);

/**
 * Feed HTML read for text and images: at most this many characters of a
 * field (a whole article in `content:encoded` is far shorter; the text kept
 * is at most 2,000 characters anyway).
 */
const MAX_HTML_CHARS = 100_000;

/**
 * `html` without comments, scripts and styles, each replaced by a space; an
 * unclosed one runs to the end. A linear scan: a lazy regex would rescan to
 * the end for each unclosed `<!--` (quadratic time on hostile feed text).
 */
function withoutBlocks(html: string): string {
  const out: string[] = [];
  let at = 0;
  const opening = /<!--|<(script|style)\b/gi;
  for (let m = opening.exec(html); m; m = opening.exec(html)) {
    out.push(html.slice(at, m.index), ' ');
    const close = m[1] ? new RegExp(`</${m[1]}\\s*>`, 'gi') : /-->/g;
    close.lastIndex = m.index + m[0].length;
    const end = close.exec(html);
    at = end ? end.index + end[0].length : html.length;
    opening.lastIndex = at;
  }
  out.push(html.slice(at));
  return out.join('');
}

/** Plain text from a feed's (often HTML) text: scripts, styles, comments and tags dropped (block ones as a space), character references decoded, spaces collapsed. Linear time: a tag ends at the next `>` before any other `<`. */
function plain(html: string | undefined): string | undefined {
  if (!html) return undefined;
  const stripped = decodeEntities(
    withoutBlocks(html.slice(0, MAX_HTML_CHARS))
      // Block elements separate words; inline ones (<b>, <a>, …) do not: "<b>world</b>." stays "world.".
      .replace(/<\/?(?:p|div|br|hr|li|ul|ol|dl|dt|dd|h[1-6]|table|tr|td|th|blockquote|pre|section|article|header|footer|figure|figcaption|img)\b[^<>]*>/gi, ' ')
      .replace(/<\/?[A-Za-z][^<>]*>/g, ''),
  )
    .replace(/\s+/g, ' ')
    .trim();
  return stripped || undefined;
}

/** An absolute http(s) URL from `value` read against `base`; undefined for anything else. */
function absolute(value: string | undefined, base?: string): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The item's article URL: the Atom `rel="alternate"` link (HTML first), the
 * RSS `<link>`, a permalink `<guid>`, the RDF `rdf:about` or an http(s) Atom
 * id; relative ones are read against the feed's base. Campaign parameters
 * (utm_*, …) are dropped as the catalogue does.
 */
function articleUrl(raw: Raw, base: string | undefined): string | undefined {
  const links = asArray(raw.link);
  const hrefs = links.filter((l) => attr(l, 'href') !== undefined);
  const alternates = hrefs.filter((l) => (attr(l, 'rel') ?? 'alternate') === 'alternate');
  const fromLinks = [attr(alternates.find((l) => /html/i.test(attr(l, 'type') ?? 'text/html')) ?? alternates[0], 'href'), hrefs.length === 0 ? text(links) : undefined].map((link) => absolute(link, base));
  // A permalink guid, an rdf:about or an id is a URL by itself: never read against the base.
  const fromIds = [attr(raw.guid, 'isPermaLink') !== 'false' ? text(raw.guid) : undefined, attr(raw, 'rdf:about'), text(raw.id)].map((id) => absolute(id));
  const url = [...fromLinks, ...fromIds].find((u) => u !== undefined);
  return url && (canonicalUrl(url) ?? url);
}

const IMAGE_PATH = /\.(jpe?g|png|gif|webp|avif)$/i;

/**
 * The item's image: an image enclosure, `media:content` (also in a
 * `media:group`), `media:thumbnail`, an Atom image enclosure link, an
 * `<image>`, else the first `<img>` of its HTML (tracking pixels left out).
 */
function image(raw: Raw, base: string | undefined): string | undefined {
  const type = (node: unknown) => attr(node, 'type');
  const medium = (node: unknown) => attr(node, 'medium');
  const imagePath = (url: string | undefined) => {
    try {
      return IMAGE_PATH.test(new URL(url ?? '', base).pathname);
    } catch {
      return false;
    }
  };
  // Declared an image, or (undeclared) an image by the look of its path; media:content is an image unless said otherwise.
  const isImage = (node: unknown, undeclared: (url: string | undefined) => boolean) =>
    type(node) || medium(node) ? (type(node) ?? '').toLowerCase().startsWith('image/') || medium(node) === 'image' : undeclared(attr(node, 'url') ?? attr(node, 'href'));
  const media = [raw, ...asArray(raw['media:group'])].filter(isObject);
  const html = [raw.description, raw['content:encoded'], raw.content, raw.summary].map(text).filter((h): h is string => h !== undefined);
  const pixel = (tag: string) => /\b(width|height)\s*=\s*["']?[01]["'\s/>]/i.test(tag);
  const candidates = [
    ...asArray(raw.enclosure).filter((n) => isImage(n, imagePath)).map((n) => attr(n, 'url')),
    ...media.flatMap((m) => asArray(m['media:content'])).filter((n) => isImage(n, () => true)).map((n) => attr(n, 'url')),
    ...media.flatMap((m) => asArray(m['media:thumbnail'])).map((n) => attr(n, 'url')),
    ...asArray(raw.link).filter((n) => attr(n, 'rel') === 'enclosure' && isImage(n, imagePath)).map((n) => attr(n, 'href')),
    text(raw.image) ?? (isObject(raw.image) ? text(raw.image.url) : undefined),
    ...html.flatMap((h) => [...h.slice(0, MAX_HTML_CHARS).matchAll(/<img\b[^<>]*>/gi)].map((m) => m[0]).filter((tag) => !pixel(tag)).map((tag) => /\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(tag)).map((m) => m && decodeEntities(m[1] ?? m[2]))),
  ];
  for (const candidate of candidates) {
    const url = absolute(candidate ?? undefined, base);
    if (url && url.length <= FEED_TEXT_LIMITS.url) return url;
  }
  return undefined;
}

/** Common zone abbreviations that Date.parse does not know (it knows UT, GMT and the North American ones of RFC 822). */
const ZONES: Record<string, string> = { CET: '+0100', CEST: '+0200', MEZ: '+0100', MESZ: '+0200', WET: '+0000', WEST: '+0100', BST: '+0100', EET: '+0200', EEST: '+0300', MSK: '+0300', IST: '+0530', JST: '+0900', KST: '+0900', AEST: '+1000', AEDT: '+1100', NZST: '+1200', NZDT: '+1300' };

/** A feed date (ISO 8601, RFC 822, Unix seconds) as ISO 8601 UTC; undefined when it cannot be read or is out of range. */
function isoDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let seconds = toUnixSeconds(value);
  const zoned = seconds === undefined ? /^(.*\d)\s*\(?([A-Z]{3,4})\)?$/.exec(value.trim()) : null;
  if (zoned && ZONES[zoned[2]]) seconds = toUnixSeconds(`${zoned[1]} ${ZONES[zoned[2]]}`);
  return seconds === undefined ? undefined : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** The string cut to `max` UTF-16 units without splitting a surrogate pair, trailing spaces dropped. */
function cut(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  let end = Math.min(value.length, max);
  if (end < value.length && /[\ud800-\udbff]/.test(value[end - 1])) end--;
  return value.slice(0, end).trim() || undefined;
}

/**
 * Themes the way the catalogue normalises them (comma-separated values
 * split, trimmed, lower-cased, duplicates dropped), each cut to 64
 * characters, the first 20 kept: the API would refuse the line otherwise.
 */
function themes(values: unknown[]): string[] {
  const kept = new Set<string>();
  for (const value of values) {
    if (typeof value !== 'string') continue;
    for (const part of value.split(',')) {
      const theme = cut(part.trim().toLowerCase(), FEED_TEXT_LIMITS.theme);
      if (theme) kept.add(theme);
    }
  }
  return [...kept].slice(0, LIMITS.themesPerArticle);
}

/** The element a document starts with (after the XML declaration, comments, processing instructions and doctype). */
function rootElement(xml: string): string | undefined {
  let rest = xml.replace(/^\uFEFF/, '');
  for (let i = 0; i < 100; i++) {
    rest = rest.trimStart();
    const skipped = /^(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)/i.exec(rest);
    if (!skipped) break;
    rest = rest.slice(skipped[0].length);
  }
  return /^<([A-Za-z_][\w.:-]*)/.exec(rest)?.[1];
}

function fromSitemap(xml: string, base: string | undefined): FeedLine[] {
  let doc: Raw;
  try {
    doc = new XMLParser({ ...XML_OPTIONS, removeNSPrefix: true }).parse(xml, true) as Raw;
  } catch (err) {
    throw new FeedFormatError(`the sitemap is not well-formed XML (${(err as Error).message.split('\n')[0]})`);
  }
  const urlset = doc.urlset;
  if (urlset === undefined) throw new FeedFormatError('not an RSS, Atom or sitemap document');
  return asArray(isObject(urlset) ? urlset.url : undefined)
    .slice(0, MAX_FEED_ARTICLES)
    .map((node) => {
      const u = isObject(node) ? node : {};
      const news = asArray(u.news).find(isObject) ?? {};
      const keywords = themes([text(news.keywords)]);
      const loc = absolute(text(u.loc), base);
      return {
        url: loc ? (canonicalUrl(loc) ?? loc) : text(u.loc),
        title: plain(text(news.title)),
        image: asArray(u.image).map((i) => absolute(isObject(i) ? text(i.loc) : undefined, loc ?? base)).find((i) => i !== undefined && i.length <= FEED_TEXT_LIMITS.url),
        category: decodeEntities(text(news.keywords)?.split(',')[0]?.trim() ?? '') || undefined,
        themes: keywords,
        published_time: isoDate(text(news.publication_date)) ?? isoDate(text(u.lastmod)),
      };
    });
}

function fromFeed(xml: string, root: string, documentUrl: string | undefined): { format: FeedFormat; lines: FeedLine[] } {
  const local = root.replace(/^.*:/, '');
  const format: FeedFormat = local === 'feed' ? 'atom' : 'rss';
  if (XMLValidator.validate(xml) !== true) throw new FeedFormatError('the feed is not well-formed XML');
  // Atom `type="xhtml"` text arrives as markup (an object would lose the order of mixed text and elements).
  const doc = new XMLParser({ ...XML_OPTIONS, stopNodes: ['*.title.div', '*.summary.div', '*.content.div'] }).parse(xml) as Raw;
  const top = isObject(doc[root]) ? doc[root] : {};
  let feed: Raw;
  let items: unknown[];
  if (local === 'rss') {
    if (!('channel' in top)) throw new FeedFormatError('not an RSS, Atom or sitemap document: an <rss> element without a <channel>');
    feed = isObject(top.channel) ? top.channel : {};
    items = asArray(feed.item);
  } else if (local === 'feed') {
    feed = top;
    items = asArray(top.entry);
  } else if (local === 'RDF' && 'channel' in top) {
    feed = top;
    items = asArray(top.item);
  } else {
    const page = local.toLowerCase() === 'html' ? ' (a web page, not its feed)' : '';
    throw new FeedFormatError(`not an RSS, Atom or sitemap document: the root element is <${root}>${page}`);
  }
  const channel = isObject(feed.channel) ? feed.channel : feed;
  const links = asArray(channel.link);
  const siteLink = absolute(attr(links.find((l) => (attr(l, 'rel') ?? 'alternate') === 'alternate' && attr(l, 'href')), 'href') ?? text(links.filter((l) => attr(l, 'href') === undefined)), documentUrl);
  const xmlBase = absolute(attr(feed, 'xml:base'), documentUrl);
  // Relative links: Atom reads them against xml:base, else the document; RSS has no rule, readers use the channel's link.
  const base = format === 'atom' ? (xmlBase ?? documentUrl ?? siteLink) : (siteLink ?? documentUrl);
  const lines = items.slice(0, MAX_FEED_ARTICLES).map((item): FeedLine => {
    const raw = isObject(item) ? item : {};
    const itemBase = absolute(attr(raw, 'xml:base'), base) ?? base;
    const url = articleUrl(raw, itemBase);
    const cats = [...asArray(raw.category), ...asArray(raw['dc:subject'])]
      .map((c) => text(c) ?? attr(c, 'term') ?? attr(c, 'label'))
      .filter((c): c is string => c !== undefined)
      .map(decodeEntities);
    const description = [raw.description, raw.summary, raw.content, raw['content:encoded']].map((d) => plain(text(d) ?? allText(d))).find((d) => d !== undefined);
    const dates = [raw.published, raw.pubDate, raw['dc:date'], raw.issued, raw.updated, raw.modified].map((d) => isoDate(text(d)));
    return {
      url,
      title: plain(text(raw.title) ?? allText(raw.title)),
      description,
      image: image(raw, url ?? itemBase),
      category: cats[0],
      themes: themes(cats),
      published_time: dates.find((d) => d !== undefined),
    };
  });
  return { format, lines };
}

/** An external (general or parameter) entity declaration in a DOCTYPE's internal subset. */
const EXTERNAL_ENTITY = /<!ENTITY\s+(?:%\s+)?[^\s>]+\s+(?:SYSTEM|PUBLIC)\b/i;

/**
 * The article lines of a feed document, at most MAX_FEED_ARTICLES (the
 * first ones; an item without a link stays, so the catalogue's report says
 * which one it is), fields without a value left out, text cut to the
 * catalogue's limits rather than refused (title 500, description 2,000,
 * category 200 characters, 20 themes of at most 64), dates as ISO 8601 UTC.
 * `documentUrl`, the feed's own address, reads relative links when the feed
 * gives no base of its own. Throws FeedFormatError.
 */

export function parseFeed(xml: string, documentUrl?: string): { format: FeedFormat; lines: FeedLine[] } {
  if (xml.trim() === '') throw new FeedFormatError('the feed is empty');
  const root = rootElement(xml);
  if (!root) throw new FeedFormatError('the feed is not well-formed XML');
  const local = root.replace(/^.*:/, '');
  if (local === 'sitemapindex') throw new FeedFormatError('a sitemap index (a list of sitemaps), not a sitemap of articles: give the address of one of its sitemaps');
  // The parser refuses external entities (it never loads them) with an error that names something else: say what it is.
  if (EXTERNAL_ENTITY.test(xml.slice(0, xml.indexOf(`<${root}`)))) throw new FeedFormatError('the feed declares an external entity (<!ENTITY … SYSTEM or PUBLIC …>), which is never loaded: remove the declaration');
  const base = absolute(documentUrl);
  const { format, lines } = local === 'urlset' ? { format: 'sitemap' as const, lines: fromSitemap(xml, base) } : fromFeed(xml, root, base);
  const clean = lines.map((line) => {
    const fields: FeedLine = {
      ...line,
      title: cut(line.title, FEED_TEXT_LIMITS.title),
      description: cut(line.description, FEED_TEXT_LIMITS.description),
      category: cut(line.category, FEED_TEXT_LIMITS.category),
    };
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0)));
  });
  return { format, lines: clean };
}
