import { createHash } from 'node:crypto';

/** Query parameters that only track campaigns; they never make a different article. */
const TRACKING_PARAMS = /^(utm_[a-z]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|igshid)$/i;

/**
 * The canonical form of an article URL: http(s) only, lower-case scheme and
 * host, no default port, no fragment, no campaign parameters (utm_*, fbclid,
 * …), remaining parameters kept in their order. Undefined for anything else.
 */
export function canonicalUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined;
  url.hash = '';
  for (const name of [...url.searchParams.keys()]) if (TRACKING_PARAMS.test(name)) url.searchParams.delete(name);
  if ([...url.searchParams.keys()].length === 0) url.search = '';
  return url.href;
}

/** An article's guid: the first 20 hex digits of the SHA-256 of its canonical URL (stable per article). */
export function articleGuid(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex').slice(0, 20);
}

/** The URL with its scheme upgraded to https (`redir_https`). */
export function toHttps(url: string): string {
  return url.replace(/^http:\/\//i, 'https://');
}
