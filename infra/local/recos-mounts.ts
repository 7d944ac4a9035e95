/**
 * Local static mounts of the recommendations feature: the browser library at
 * `/lib/v1/` (built fresh from shared/browser/recos.ts with esbuild, so edits
 * show on reload) and the demo publisher site at `/demo/`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { join, resolve } from 'node:path';
import { buildLibrary } from '../../shared/browser/build.js';
import type { StaticMount } from './gateway.js';

const siteDir = resolve(import.meta.dirname, 'demo-site');

export interface DemoArticle {
  slug: string;
  title: string;
  description: string;
  section: string;
  themes: string;
  hoursAgo: number;
  color: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const fill = (template: string, values: Record<string, string>) => template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => escapeHtml(values[name] ?? ''));

/** The library at `/lib/v1/` (also `/lib/v1/recos.js`). */
export function libraryMount(): StaticMount {
  return {
    prefix: '/lib/v1/',
    async serve(path) {
      if (path !== '' && path !== 'recos.js') return undefined;
      return { status: 200, body: await buildLibrary(), contentType: 'application/javascript; charset=utf-8' };
    },
  };
}

export interface DemoKeys {
  trackingKey: string;
  blockKey: string;
}

/** Keys of the demo client seeded by `npm start` (DATA_DIR/demo-client.json). */
function seededKeys(): DemoKeys | undefined {
  const file = join(resolve(process.env.DATA_DIR ?? '.data'), 'demo-client.json');
  if (!existsSync(file)) return undefined;
  const seeded = JSON.parse(readFileSync(file, 'utf8')) as { tracking_key: string; block_key: string };
  return { trackingKey: seeded.tracking_key, blockKey: seeded.block_key };
}

/** Publication time of a demo article: `hoursAgo` before the current hour (stable within the hour, so the feed's ETag is). */
const publishedAt = (a: DemoArticle) => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - a.hoursAgo * 3_600_000);

/**
 * The demo site's RSS 2.0 feed (`/demo/feed.xml`), the catalogue feed `npm
 * start` points the demo client at: absolute links on the host the feed
 * was asked from, categories and themes, an image; with an ETag and
 * Last-Modified, and 304 to a matching conditional request.
 */
function demoFeed(articles: DemoArticle[], headers: http.IncomingHttpHeaders) {
  const origin = `http://${headers.host ?? 'localhost'}`;
  const items = articles
    .map((a) => {
      const cats = [a.section, ...a.themes.split(',')].map((c) => `<category>${escapeHtml(c.trim())}</category>`).join('');
      return `<item><title>${escapeHtml(a.title)}</title><link>${origin}/demo/articles/${a.slug}.html</link><guid>${origin}/demo/articles/${a.slug}.html</guid><description>${escapeHtml(a.description)}</description><pubDate>${publishedAt(a).toUTCString()}</pubDate>${cats}<enclosure url="${origin}/demo/img/${a.slug}.svg" type="image/svg+xml" length="0"/></item>`;
    })
    .join('\n');
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>The Demo Gazette</title><link>${origin}/demo/</link><description>Demo publisher site</description>\n${items}\n</channel></rss>\n`;
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
  const lastModified = new Date(Math.max(...articles.map((a) => publishedAt(a).getTime()))).toUTCString();
  const validators = { etag, 'last-modified': lastModified };
  if (headers['if-none-match'] === etag) return { status: 304, body: '', contentType: 'application/rss+xml; charset=utf-8', headers: validators };
  return { status: 200, body, contentType: 'application/rss+xml; charset=utf-8', headers: validators };
}

/**
 * The demo publisher site at `/demo/`: an index and one page per article of
 * demo-site/articles.json, with real meta tags, the library and one block,
 * and its RSS feed at `/demo/feed.xml`. Publication times are relative to
 * now, so the articles stay fresh.
 */
export function demoSiteMount(keys?: DemoKeys | (() => DemoKeys | undefined)): StaticMount {
  const articles = JSON.parse(readFileSync(join(siteDir, 'articles.json'), 'utf8')) as DemoArticle[];
  const keysNow = () => (typeof keys === 'function' ? keys() : (keys ?? seededKeys()));
  return {
    prefix: '/demo/',
    serve(path, request) {
      const html = (body: string) => ({ status: 200, body, contentType: 'text/html; charset=utf-8' });
      if (path === 'feed.xml') return demoFeed(articles, request?.headers ?? {});
      if (path === '' || path === 'index.html') {
        const list = articles
          .map((a) => `<li><a href="/demo/articles/${a.slug}.html">${escapeHtml(a.title)}</a> <small>${escapeHtml(a.section)}</small></li>`)
          .join('\n');
        return html(readFileSync(join(siteDir, 'index.html'), 'utf8').replace('{{list}}', list));
      }
      if (path === 'demo.css') return { status: 200, body: readFileSync(join(siteDir, 'demo.css')), contentType: 'text/css; charset=utf-8' };
      if (path === 'demo.js') return { status: 200, body: readFileSync(join(siteDir, 'demo.js')), contentType: 'application/javascript; charset=utf-8' };
      const page = /^articles\/([a-z0-9-]+)\.html$/.exec(path);
      const image = /^img\/([a-z0-9-]+)\.svg$/.exec(path);
      const article = articles.find((a) => a.slug === (page ?? image)?.[1]);
      if (!article) return { status: 404, body: 'Not found', contentType: 'text/plain; charset=utf-8' };
      if (image) {
        const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="240"><rect width="640" height="240" fill="${article.color}"/><text x="24" y="140" font-family="Georgia" font-size="28" fill="#fff">${escapeHtml(article.section)}</text></svg>`;
        return { status: 200, body: svg, contentType: 'image/svg+xml' };
      }
      const k = keysNow();
      if (!k) return { status: 503, body: 'The demo client is not seeded yet', contentType: 'text/plain; charset=utf-8' };
      const published = publishedAt(article).toISOString();
      return html(fill(readFileSync(join(siteDir, 'article.html'), 'utf8'), { ...article, hoursAgo: String(article.hoursAgo), published, trackingKey: k.trackingKey, blockKey: k.blockKey }));
    },
  };
}

/** Both mounts, as `npm start` serves them. */
export function recosMounts(keys?: DemoKeys | (() => DemoKeys | undefined)): StaticMount[] {
  return [libraryMount(), demoSiteMount(keys)];
}
