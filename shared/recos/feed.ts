/**
 * Reads a publisher's catalogue feed: RSS 2.0 (also RSS 1.0/RDF) and Atom
 * through @extractus/feed-extractor, XML sitemaps with the Google News (and
 * image) extension through fast-xml-parser. The result is article lines in
 * the shape `PUT /v1/articles` accepts; they are validated the same way.
 */
import { extractFromXml } from '@extractus/feed-extractor';
import { XMLParser } from 'fast-xml-parser';
import { LIMITS } from './tracking.js';

export type FeedFormat = 'rss' | 'atom' | 'sitemap';

/** Most articles read from one feed document (the newest ones are usually first). */
export const MAX_FEED_ARTICLES = 1000;

/** A feed that is not one of the formats read, or not well-formed XML. */
export class FeedFormatError extends Error {}

type Raw = Record<string, unknown>;

const asArray = (value: unknown): unknown[] => (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]);

/** Text of an XML node as fast-xml-parser gives it: a string, a number, or `{'#text': …}` when it has attributes. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (typeof value === 'number') return String(value);
  if (value && typeof value === 'object' && '#text' in value) return text((value as Raw)['#text']);
  return undefined;
}

const attr = (node: unknown, name: string): string | undefined => (node && typeof node === 'object' ? text((node as Raw)[`@_${name}`]) : undefined);

/** Categories of an item: RSS `<category>` text, Atom `<category term>`. */
function categories(raw: Raw): string[] {
  return asArray(raw.category)
    .map((c) => text(c) ?? attr(c, 'term') ?? attr(c, 'label'))
    .filter((c): c is string => c !== undefined);
}

/** The item's image: an image enclosure, `media:content` / `media:thumbnail`, or an Atom enclosure link. */
function image(raw: Raw): string | undefined {
  const isImage = (node: unknown) => (attr(node, 'type') ?? '').startsWith('image/') || attr(node, 'medium') === 'image';
  for (const node of asArray(raw.enclosure)) if (isImage(node)) return attr(node, 'url');
  for (const node of asArray(raw['media:content'])) if (isImage(node) || !attr(node, 'type')) return attr(node, 'url');
  for (const node of asArray(raw['media:thumbnail'])) if (attr(node, 'url')) return attr(node, 'url');
  for (const node of asArray(raw.link)) if (attr(node, 'rel') === 'enclosure' && isImage(node)) return attr(node, 'href');
  return undefined;
}

/** Plain text from a feed's (often HTML) description. */
function plain(html: string | undefined): string | undefined {
  if (!html) return undefined;
  const stripped = html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(nbsp|#160);/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return stripped || undefined;
}

const isSitemap = (xml: string) => /<(\w+:)?urlset[\s>]/.test(xml.slice(0, 4096));

function fromSitemap(xml: string): Raw[] {
  let doc: Raw;
  try {
    doc = new XMLParser({ ignoreAttributes: false, removeNSPrefix: true, processEntities: true, htmlEntities: true }).parse(xml, true) as Raw;
  } catch (err) {
    throw new FeedFormatError(`the sitemap is not well-formed XML (${(err as Error).message.split('\n')[0]})`);
  }
  const urlset = doc.urlset as Raw | undefined;
  if (!urlset || typeof urlset !== 'object') throw new FeedFormatError('not an RSS, Atom or sitemap document');
  return asArray(urlset.url).map((node) => {
    const u = (node ?? {}) as Raw;
    const news = (asArray(u.news)[0] ?? {}) as Raw;
    const keywords = (text(news.keywords) ?? '').split(',').map((k) => k.trim()).filter(Boolean);
    return {
      url: text(u.loc),
      title: text(news.title),
      image: text(((asArray(u.image)[0] ?? {}) as Raw).loc),
      category: keywords[0],
      themes: keywords,
      published_time: text(news.publication_date) ?? text(u.lastmod),
    };
  });
}

function fromFeed(xml: string): { format: FeedFormat; lines: Raw[] } {
  let data;
  try {
    data = extractFromXml(xml, { descriptionMaxLen: 0, getExtraEntryFields: (entry) => ({ raw: entry }) });
  } catch (err) {
    const message = (err as Error).message;
    throw new FeedFormatError(/not well-formed/i.test(message) ? 'the feed is not well-formed XML' : 'not an RSS, Atom or sitemap document');
  }
  const atom = /<feed[\s>]/.test(xml.slice(0, 4096)) && !/<rss[\s>]/.test(xml.slice(0, 4096));
  const lines = (data.entries ?? []).map((entry) => {
    const raw = (entry.raw ?? {}) as Raw;
    const cats = categories(raw);
    return {
      url: entry.link,
      title: entry.title,
      description: plain(text(raw.description) ?? text(raw.summary) ?? text(raw.content) ?? entry.description),
      image: image(raw),
      category: cats[0],
      themes: cats,
      published_time: text(raw.published) ?? text(raw.pubDate) ?? text(raw['dc:date']) ?? text(raw.updated) ?? (entry.published || undefined),
    };
  });
  return { format: atom ? 'atom' : 'rss', lines };
}

/**
 * The article lines of a feed document, at most MAX_FEED_ARTICLES (the
 * first ones), undefined fields left out, text cut to the catalogue's
 * limits (title 500, description 2,000, category 200 characters, 20 themes
 * of at most 64); throws FeedFormatError.
 */
export function parseFeed(xml: string): { format: FeedFormat; lines: Raw[] } {
  const { format, lines } = isSitemap(xml) ? { format: 'sitemap' as const, lines: fromSitemap(xml) } : fromFeed(xml);
  // A feed is not written for this service: over-long fields are cut to the API's limits rather than refused.
  const cut = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : undefined);
  const clean = lines.slice(0, MAX_FEED_ARTICLES).map((line) => {
    const themes = asArray(line.themes).filter((t): t is string => typeof t === 'string' && t.length <= 64).slice(0, LIMITS.themesPerArticle);
    const fields = { ...line, title: cut(line.title, 500), description: cut(line.description, 2000), category: cut(line.category, 200), themes };
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0)));
  });
  return { format, lines: clean };
}
