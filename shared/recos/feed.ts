/**
 * Reads a catalogue feed (RSS 2.0, RSS 1.0, Atom, sitemaps with Google News) with fast-xml-parser into the article
 * lines `PUT /v1/articles` accepts. Not @extractus/feed-extractor: its tag-stripping regex takes quadratic time on
 * hostile descriptions, and its entries lose rel, relative links and entities.
 */
import { decodeHTML } from 'entities';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { MAX_DATE_CHARS, rangeProblem } from './dates.js';
import { isoUtc, readFeedDate } from './feed-dates.js';
import { LIMITS } from './limits.js';
import { plainText, withoutMarkup } from './plain-text.js';
import { ARTICLE_TEXT_LIMITS } from './schemas.js';
import { canonicalUrl } from './urls.js';

export type FeedFormat = 'rss' | 'atom' | 'sitemap';

/** Most articles read from one feed document (the newest ones are usually first). */
export const MAX_FEED_ARTICLES = 1000;

/** The catalogue's limits on an article's text (`PUT /v1/articles`). */
export const FEED_TEXT_LIMITS = ARTICLE_TEXT_LIMITS;

/**
 * The work one feed document may cost. Every step is linear in the document
 * (no regular expression with nested quantifiers runs over it; the prolog
 * is read by a scanner), so these caps bound the time per feed: a longer
 * document, more entity expansion or deeper nesting is refused with a
 * FeedFormatError, and only the first items are read.
 */
export const FEED_PARSE_LIMITS = {
  /** Characters of a document (the fetch stops at 5 MiB; a decoded document has at most that many characters). */
  maxChars: 5 * 1024 * 1024,
  /** Items read. */
  maxItems: MAX_FEED_ARTICLES,
  /** Characters of one field's HTML read for text and images. */
  maxHtmlChars: 100_000,
  /** Element nesting (fast-xml-parser's own default). */
  maxNestedTags: 100,
  /** Internal entities: declarations, characters per declaration, expansions and characters added by them in the whole document. */
  maxEntityCount: 1000,
  maxEntitySize: 10_000,
  maxTotalExpansions: 10_000,
  maxExpandedLength: 100_000,
} as const;

/** A feed that is not one of the formats read, not well-formed XML, or beyond FEED_PARSE_LIMITS. */
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
const XML_OPTIONS = {
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  maxNestedTags: FEED_PARSE_LIMITS.maxNestedTags,
  processEntities: {
    enabled: true,
    maxEntityCount: FEED_PARSE_LIMITS.maxEntityCount,
    maxEntitySize: FEED_PARSE_LIMITS.maxEntitySize,
    maxTotalExpansions: FEED_PARSE_LIMITS.maxTotalExpansions,
    maxExpandedLength: FEED_PARSE_LIMITS.maxExpandedLength,
  },
} as const;

/**
 * What the parser's own refusals mean for the publisher (its messages are
 * for programmers and name internals); anything else it throws is "not
 * well-formed".
 */
const PARSER_REFUSALS: Array<[RegExp, string]> = [
  [/Maximum nested tags exceeded/, `elements are nested more than ${FEED_PARSE_LIMITS.maxNestedTags} deep`],
  [/Expanded content length limit exceeded|expansion/i, `its entities expand to more than ${FEED_PARSE_LIMITS.maxExpandedLength.toLocaleString('en-US')} characters (or more than ${FEED_PARSE_LIMITS.maxTotalExpansions.toLocaleString('en-US')} references)`],
  [/Entity count .* exceeds/, `it declares more than ${FEED_PARSE_LIMITS.maxEntityCount.toLocaleString('en-US')} entities`],
  [/Entity .* size .* exceeds/, `it declares an entity longer than ${FEED_PARSE_LIMITS.maxEntitySize.toLocaleString('en-US')} characters`],
  [/reserved JavaScript keyword|prototype pollution/, 'an element or attribute is named __proto__, constructor or prototype, which is not read'],
];

/** The parser's result, or a FeedFormatError that says why the document cannot be read (what = "feed" or "sitemap"). */
function parsed(what: string, parse: () => unknown): Raw {
  let doc: unknown;
  try {
    doc = parse();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const known = PARSER_REFUSALS.find(([pattern]) => pattern.test(message));
    throw new FeedFormatError(known ? `the ${what} cannot be read: ${known[1]}` : `the ${what} is not well-formed XML (${message.split('\n')[0].slice(0, 200)})`, { cause: err });
  }
  return isObject(doc) ? doc : {};
}

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
const MAX_HTML_CHARS = FEED_PARSE_LIMITS.maxHtmlChars;

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

/**
 * Plain text from a feed's (often HTML) text: scripts, styles, comments and
 * tags dropped (block ones as a space), character references decoded, then
 * whatever the decoding made look like markup (`&lt;script&gt;`) dropped
 * too, control characters removed, spaces collapsed (plain-text.ts). Linear
 * time: a tag ends at the next `>` before any other `<`.
 */
function plain(html: string | undefined): string | undefined {
  if (!html) return undefined;
  const stripped = plainText(
    decodeEntities(
      withoutBlocks(html.slice(0, MAX_HTML_CHARS))
        // Block elements separate words; inline ones (<b>, <a>, …) do not: "<b>world</b>." stays "world.".
        .replace(/<\/?(?:p|div|br|hr|li|ul|ol|dl|dt|dd|h[1-6]|table|tr|td|th|blockquote|pre|section|article|header|footer|figure|figcaption|img)\b[^<>]*>/gi, ' ')
        .replace(/<\/?[A-Za-z][^<>]*>/g, ''),
    ),
  ).replace(/\s+/g, ' ');
  return stripped || undefined;
}

/** Plain text from a short feed value that is not HTML by its format (a category, a keyword): references decoded, then markup and control characters removed. */
const plainValue = (value: string): string => plainText(withoutMarkup(decodeEntities(value.slice(0, MAX_HTML_CHARS))));

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

/**
 * A feed date (ISO 8601, RFC 822, Unix seconds: feed-dates.ts) as ISO 8601 UTC;
 * undefined when it cannot be read as a date (the next date field is
 * tried). A date outside 1970 … 9999-12-31 is kept (as ISO 8601, or as
 * written when even that cannot show it), so the catalogue rejects the item
 * with its cause instead of publishing it at the time of the poll.
 */
function isoDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const reading = readFeedDate(value);
  if (!('seconds' in reading)) return undefined;
  if (rangeProblem(reading.seconds) === undefined) return isoUtc(reading.seconds);
  const iso = Math.abs(reading.seconds) < 8.64e12 ? isoUtc(reading.seconds) : undefined;
  return iso ?? value.trim().slice(0, MAX_DATE_CHARS);
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
      const theme = cut(plainValue(part).toLowerCase(), FEED_TEXT_LIMITS.theme);
      if (theme) kept.add(theme);
    }
  }
  return [...kept].slice(0, LIMITS.themesPerArticle);
}

/**
 * The index after the doctype declaration that starts at `at` (its internal subset's quoted values and comments may
 * hold `]` and `>`), or -1 when it is not closed. One pass, linear: a regex backtracks exponentially on `<!DOCTYPE []][]…`.
 */
function doctypeEnd(xml: string, at: number): number {
  let i = at + '<!DOCTYPE'.length;
  let inSubset = false;
  while (i < xml.length) {
    const c = xml[i];
    if (c === '"' || c === "'") {
      const close = xml.indexOf(c, i + 1);
      if (close < 0) return -1;
      i = close + 1;
    } else if (inSubset && xml.startsWith('<!--', i)) {
      const close = xml.indexOf('-->', i + 4);
      if (close < 0) return -1;
      i = close + 3;
    } else if (inSubset && xml.startsWith('<?', i)) {
      const close = xml.indexOf('?>', i + 2);
      if (close < 0) return -1;
      i = close + 2;
    } else if (c === '[' && !inSubset) {
      inSubset = true;
      i++;
    } else if (c === ']' && inSubset) {
      inSubset = false;
      i++;
    } else if (c === '>' && !inSubset) {
      return i + 1;
    } else {
      i++;
    }
  }
  return -1;
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[\w.:-]/;

/**
 * The element a document starts with (after a byte order mark, the XML
 * declaration, comments, processing instructions and the doctype) and
 * where it starts. A scanner in linear time: each skipped construct ends at
 * the first `?>`, `-->` or (doctype) `>` found by indexOf from its start.
 */
function rootElement(xml: string): { name: string; at: number } | undefined {
  let i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < xml.length && /\s/.test(xml[i])) i++;
    let end: number;
    if (xml.startsWith('<?', i)) end = xml.indexOf('?>', i + 2) + 2;
    else if (xml.startsWith('<!--', i)) end = xml.indexOf('-->', i + 4) + 3;
    else if (xml.slice(i, i + 9).toUpperCase() === '<!DOCTYPE') end = doctypeEnd(xml, i);
    else break;
    if (end <= i) return undefined;
    i = end;
  }
  if (xml[i] !== '<' || !NAME_START.test(xml[i + 1] ?? '')) return undefined;
  let j = i + 2;
  while (j < xml.length && NAME_CHAR.test(xml[j])) j++;
  return { name: xml.slice(i + 1, j), at: i };
}

function fromSitemap(xml: string, base: string | undefined): FeedLine[] {
  const doc = parsed('sitemap', () => new XMLParser({ ...XML_OPTIONS, removeNSPrefix: true }).parse(xml, true));
  const urlset = doc.urlset;
  if (urlset === undefined) throw new FeedFormatError('not an RSS, Atom or sitemap document');
  return asArray(isObject(urlset) ? urlset.url : undefined)
    .slice(0, FEED_PARSE_LIMITS.maxItems)
    .map((node) => {
      const u = isObject(node) ? node : {};
      const news = asArray(u.news).find(isObject) ?? {};
      const keywords = themes([text(news.keywords)]);
      const loc = absolute(text(u.loc), base);
      return {
        url: loc ? (canonicalUrl(loc) ?? loc) : text(u.loc),
        title: plain(text(news.title)),
        image: asArray(u.image).map((i) => absolute(isObject(i) ? text(i.loc) : undefined, loc ?? base)).find((i) => i !== undefined && i.length <= FEED_TEXT_LIMITS.url),
        category: plainValue(text(news.keywords)?.split(',')[0] ?? '') || undefined,
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
  const doc = parsed('feed', () => new XMLParser({ ...XML_OPTIONS, stopNodes: ['*.title.div', '*.summary.div', '*.content.div'] }).parse(xml));
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
  const lines = items.slice(0, FEED_PARSE_LIMITS.maxItems).map((item): FeedLine => {
    const raw = isObject(item) ? item : {};
    const itemBase = absolute(attr(raw, 'xml:base'), base) ?? base;
    const url = articleUrl(raw, itemBase);
    const cats = [...asArray(raw.category), ...asArray(raw['dc:subject'])]
      .map((c) => text(c) ?? attr(c, 'term') ?? attr(c, 'label'))
      .filter((c): c is string => c !== undefined);
    const description = [raw.description, raw.summary, raw.content, raw['content:encoded']].map((d) => plain(text(d) ?? allText(d))).find((d) => d !== undefined);
    const dates = [raw.published, raw.pubDate, raw['dc:date'], raw.issued, raw.updated, raw.modified].map((d) => isoDate(text(d)));
    return {
      url,
      title: plain(text(raw.title) ?? allText(raw.title)),
      description,
      image: image(raw, url ?? itemBase),
      category: cats.length > 0 ? plainValue(cats[0]) || undefined : undefined,
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
 * which one it is), fields without a value left out, text as plain text
 * (plain-text.ts) cut to the catalogue's limits rather than refused (title
 * 500, description 2,000, category 200 characters, 20 themes of at most
 * 64), dates as ISO 8601 UTC. `documentUrl`, the feed's own address, reads
 * relative links when the feed gives no base of its own. Linear in the
 * document, within FEED_PARSE_LIMITS. Throws FeedFormatError, and nothing
 * else for anything a document holds.
 */
export function parseFeed(xml: string, documentUrl?: string): { format: FeedFormat; lines: FeedLine[] } {
  if (xml.trim() === '') throw new FeedFormatError('the feed is empty');
  if (xml.length > FEED_PARSE_LIMITS.maxChars) throw new FeedFormatError(`the feed is longer than ${FEED_PARSE_LIMITS.maxChars.toLocaleString('en-US')} characters`);
  const root = rootElement(xml);
  if (!root) throw new FeedFormatError('the feed is not well-formed XML');
  const local = root.name.replace(/^.*:/, '');
  if (local === 'sitemapindex') throw new FeedFormatError('a sitemap index (a list of sitemaps), not a sitemap of articles: give the address of one of its sitemaps');
  // The parser refuses external entities (it never loads them) with an error that names something else: say what it is.
  if (EXTERNAL_ENTITY.test(xml.slice(0, root.at))) throw new FeedFormatError('the feed declares an external entity (<!ENTITY … SYSTEM or PUBLIC …>), which is never loaded: remove the declaration');
  const base = absolute(documentUrl);
  const { format, lines } = local === 'urlset' ? { format: 'sitemap' as const, lines: fromSitemap(xml, base) } : fromFeed(xml, root.name, base);
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
