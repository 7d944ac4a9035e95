/**
 * Local static mounts of the recommendations feature: the browser library at
 * `/lib/v1/` (built fresh from shared/browser/recos.ts with esbuild, so edits
 * show on reload) and the demo publisher site at `/demo/`.
 */
import { existsSync, readFileSync } from 'node:fs';
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

/**
 * The demo publisher site at `/demo/`: an index and one page per article of
 * demo-site/articles.json, with real meta tags, the library and one block.
 * Publication times are relative to now, so the articles stay fresh.
 */
export function demoSiteMount(keys?: DemoKeys | (() => DemoKeys | undefined)): StaticMount {
  const articles = JSON.parse(readFileSync(join(siteDir, 'articles.json'), 'utf8')) as DemoArticle[];
  const keysNow = () => (typeof keys === 'function' ? keys() : (keys ?? seededKeys()));
  return {
    prefix: '/demo/',
    async serve(path) {
      const html = (body: string) => ({ status: 200, body, contentType: 'text/html; charset=utf-8' });
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
      const published = new Date(Date.now() - article.hoursAgo * 3600_000).toISOString();
      return html(fill(readFileSync(join(siteDir, 'article.html'), 'utf8'), { ...article, hoursAgo: String(article.hoursAgo), published, trackingKey: k.trackingKey, blockKey: k.blockKey }));
    },
  };
}

/** Both mounts, as `npm start` serves them. */
export function recosMounts(keys?: DemoKeys | (() => DemoKeys | undefined)): StaticMount[] {
  return [libraryMount(), demoSiteMount(keys)];
}
