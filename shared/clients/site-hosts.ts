/**
 * A client's site hosts: the allow-list of the hosts its articles live on.
 * Page views of other hosts are refused and articles of other hosts are
 * never recommended nor redirected to. Without a list nothing is allowed.
 *
 * An entry is an exact host (`news.example.com`, `localhost`, `127.0.0.1`;
 * `www.news.example.com` is another host) or `*.example.com`: any subdomain of
 * example.com at any depth, not example.com itself (list both when both serve
 * articles). A wildcard needs at least two labels after `*.` (`*.com` is refused).
 */
import { InvalidClientSettingError } from './errors.js';

/** At most this many entries per client. */
export const MAX_SITE_HOSTS = 50;

function normaliseHost(raw: string): string | undefined {
  // No port, path, credentials or IPv6 literal: only a name or an IPv4 address.
  if (!raw || /[\s/?#@\\%:[\]*]/.test(raw)) return undefined;
  try {
    const host = new URL(`http://${raw.toLowerCase()}`).hostname;
    return host && !host.startsWith('.') && !host.endsWith('.') && !host.includes('..') ? host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Validates and normalises site host entries (an array, or a comma-separated
 * string as the admin CLI takes them): trimmed, lower-cased, punycode,
 * deduplicated. Throws a 400 naming the first bad entry.
 */
export function parseSiteHosts(input: string | readonly string[]): string[] {
  const entries = (typeof input === 'string' ? input.split(',') : [...input]).map((h) => h.trim()).filter((h) => h !== '');
  const out: string[] = [];
  for (const entry of entries) {
    const wildcard = entry.startsWith('*.');
    const host = normaliseHost(wildcard ? entry.slice(2) : entry);
    if (!host) throw new InvalidClientSettingError('hosts', `hosts: "${entry.slice(0, 100)}" is not a host name (e.g. news.example.com or *.example.com)`);
    if (wildcard && (/^[\d.]+$/.test(host) || host.split('.').length < 2)) {
      throw new InvalidClientSettingError('hosts', `hosts: "${entry.slice(0, 100)}" is too broad: a wildcard needs a domain of at least two labels (e.g. *.example.com)`);
    }
    const normalised = wildcard ? `*.${host}` : host;
    if (!out.includes(normalised)) out.push(normalised);
  }
  if (out.length > MAX_SITE_HOSTS) throw new InvalidClientSettingError('hosts', `hosts: at most ${MAX_SITE_HOSTS} entries`);
  return out;
}

/** The stored list of a client item, tolerating a missing or malformed attribute (read as empty). */
export function storedSiteHosts(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase()) : [];
}

/** True when `host` (a URL's hostname) is allowed by the entries; always false for an empty list. */
export function siteHostAllowed(siteHosts: readonly string[], host: string): boolean {
  const h = host.toLowerCase();
  return siteHosts.some((entry) => (entry.startsWith('*.') ? h.endsWith(entry.slice(1)) && h.length > entry.length - 1 : h === entry));
}

/** True when the URL is absolute http(s) and its host is allowed by the entries. */
export function siteUrlAllowed(siteHosts: readonly string[], url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && siteHostAllowed(siteHosts, parsed.hostname);
}
