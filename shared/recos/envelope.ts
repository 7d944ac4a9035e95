import type { Ranked } from './ranking.js';
import { linkRid } from './recomm-ids.js';
import type { RecommendationOutput } from './schemas.js';
import type { BlockSettings, Envelope } from './types.js';
import { toHttps } from './urls.js';

export interface LinkOptions {
  /** The recommendations API's public address ({recos_url}). */
  baseUrl: string;
  blockKey: string;
  redirHttps: boolean;
  noredir: boolean;
  /** The answer's `recomm_id`: its redirect URLs carry it signed per article as `rid` (shared/recos/recomm-ids.ts). */
  recommId?: string;
  /** The client's recommendation id secret, which signs each link's `rid`. */
  secret?: string;
}

/** What identifies one answer: its `recomm_id` and the A/B variant that produced it (shared/recos/experiments.ts). */
export interface AnswerId {
  recommId: string;
  variant: string;
}

/**
 * The redirection URL of an article: `{recos_url}/v1/r/<block_key>/<guid>`,
 * with `?rid=<recomm_id>.<tag>` (signed for this block and article) when the
 * answer has an id, and on https with `https=1` (the 302 then goes to the
 * https article) when `redir_https` is set.
 */
export function redirectUrl({ baseUrl, blockKey, redirHttps, recommId, secret }: Pick<LinkOptions, 'baseUrl' | 'blockKey' | 'redirHttps' | 'recommId' | 'secret'>, guid: string): string {
  const url = `${redirHttps ? toHttps(baseUrl) : baseUrl}/v1/r/${encodeURIComponent(blockKey)}/${guid}`;
  const rid = recommId && secret ? linkRid(secret, blockKey, recommId, guid) : undefined;
  const query = [...(rid ? [`rid=${encodeURIComponent(rid)}`] : []), ...(redirHttps ? ['https=1'] : [])];
  return query.length > 0 ? `${url}?${query.join('&')}` : url;
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

/** The response body in the chosen envelope (spec 4.11), with the answer's `recomm_id` and `variant` at the top level of both. */
export function envelope(kind: Envelope, page: Ranked[], start: number, algo: string, links: LinkOptions, settings: Pick<BlockSettings, 'categoryDisplay'>, answer: AnswerId) {
  const ids = { recomm_id: answer.recommId, variant: answer.variant };
  const withRid = { ...links, recommId: answer.recommId };
  if (kind === 'legacy') {
    return { count: page.length, start, recommendations: page.map((r) => item(r, withRid, settings, false)), ...ids };
  }
  return { result: { recommendation: page.map((r) => item(r, withRid, settings, true)) }, algo, status: 'OK' as const, ...ids };
}

/** A JSONP body: `/**\/callback({...});`, with the line separators JSON allows but old JavaScript does not escaped. */
export function jsonp(callback: string, body: unknown): string {
  const json = JSON.stringify(body).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return `/**/${callback}(${json});`;
}
