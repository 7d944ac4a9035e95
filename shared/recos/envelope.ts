import type { Ranked } from './ranking.js';
import type { RecommendationOutput } from './schemas.js';
import type { BlockSettings, Envelope } from './types.js';
import { toHttps } from './urls.js';

export interface LinkOptions {
  /** The recommendations API's public address ({recos_url}). */
  baseUrl: string;
  blockKey: string;
  redirHttps: boolean;
  noredir: boolean;
}

/**
 * The redirection URL of an article: `{recos_url}/v1/r/<block_key>/<guid>`,
 * on https with `?https=1` (the 302 then goes to the https article) when
 * `redir_https` is set.
 */
export function redirectUrl({ baseUrl, blockKey, redirHttps }: Pick<LinkOptions, 'baseUrl' | 'blockKey' | 'redirHttps'>, guid: string): string {
  const url = `${redirHttps ? toHttps(baseUrl) : baseUrl}/v1/r/${encodeURIComponent(blockKey)}/${guid}`;
  return redirHttps ? `${url}?https=1` : url;
}

function item(r: Ranked, links: LinkOptions, settings: Pick<BlockSettings, 'categoryDisplay'>, smart: boolean): RecommendationOutput {
  const a = r.article;
  const out: RecommendationOutput = {
    guid: a.guid,
    url: links.noredir ? a.url : redirectUrl(links, a.guid),
    ...(links.noredir ? { url_raw: a.url } : {}),
    title: a.title,
    desc: a.desc,
    image: a.image,
    category: a.category,
  };
  if (smart) {
    out.category_display = settings.categoryDisplay[a.category] ?? a.category;
    out.published_time = a.published;
    if (r.reason) out.reason = r.reason;
  }
  return out;
}

/** The response body in the chosen envelope (spec 4.11). */
export function envelope(kind: Envelope, page: Ranked[], start: number, algo: string, links: LinkOptions, settings: Pick<BlockSettings, 'categoryDisplay'>) {
  if (kind === 'legacy') {
    return { count: page.length, start, recommendations: page.map((r) => item(r, links, settings, false)) };
  }
  return { result: { recommendation: page.map((r) => item(r, links, settings, true)) }, algo, status: 'OK' as const };
}

/** A JSONP body: `/**\/callback({...});`, with the line separators JSON allows but old JavaScript does not escaped. */
export function jsonp(callback: string, body: unknown): string {
  const json = JSON.stringify(body).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return `/**/${callback}(${json});`;
}
