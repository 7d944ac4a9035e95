import type { BlockKey, Client } from '../clients/clients.js';
import { siteHostAllowed, storedSiteHosts } from '../clients/site-hosts.js';
import type { BlockSettings, Envelope, Pin, Variant, Weights } from './types.js';
import { articleGuid } from './urls.js';

/** Default blend weights (hand-set; `npm run bench:recos:quality` evaluates them against baselines and single-signal ablations). */
export const DEFAULT_WEIGHTS: Weights = { covisit: 1, content: 0.35, preferences: 0.6, popularity: 0.3, freshness: 0.2 };

export const BLOCK_DEFAULTS = { rows: 10, maxRows: 50, maxAgeDays: 30, freshnessHours: 48, envelope: 'smart-section' as Envelope };

/** Longest freshness window (30 days): the fresh list keeps catalogue articles published within it. */
export const MAX_FRESHNESS_HOURS = 720;

/** How far ahead a publication time may be and still count as fresh (a scheduled article an hour early; later dates are likely wrong). */
export const FRESH_AHEAD_SECONDS = 3600;

/**
 * Whether an article published at `published` belongs on the fresh list at `now`: within MAX_FRESHNESS_HOURS before it
 * and not more than FRESH_AHEAD_SECONDS after `aheadOf` (by default `now`; such an entry is never a candidate until
 * then, and entries dated far ahead would sort first and never be pruned). A writer dating its work by view time (the
 * page-view consumer: a batch redelivered or applied late is hours old) passes the processing time as `aheadOf`, so an
 * entry of an article published after its views is not taken for one dated ahead.
 */
export const freshListable = (published: number, now: number, aheadOf = now): boolean =>
  published >= now - MAX_FRESHNESS_HOURS * 3600 && published <= Math.max(now, aheadOf) + FRESH_AHEAD_SECONDS;

/** Hard ceiling of a block's ranking length, whatever its settings say. */
export const MAX_ROWS_CEILING = 100;

const num = (value: unknown, fallback: number, min: number, max: number) =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? value : fallback;

/**
 * A block's settings from its key item, defaults filling what is absent or
 * invalid (settings are written by support staff with the admin CLI), with
 * its client's site hosts (none when the client is unknown).
 */
export function blockSettings(item: BlockKey, client: Pick<Client, 'siteHosts'> | undefined): BlockSettings {
  const weights = (item.weights ?? {}) as Partial<Record<keyof Weights, unknown>>;
  const maxRows = Math.floor(num(item.maxRows, BLOCK_DEFAULTS.maxRows, 1, MAX_ROWS_CEILING));
  const hosts = Array.isArray(item.hosts) ? item.hosts.filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase()) : undefined;
  const display = item.categoryDisplay && typeof item.categoryDisplay === 'object' ? (item.categoryDisplay as Record<string, unknown>) : {};
  return {
    clientId: item.clientId,
    rows: Math.min(maxRows, Math.floor(num(item.rows, BLOCK_DEFAULTS.rows, 1, MAX_ROWS_CEILING))),
    maxRows,
    maxAgeDays: num(item.maxAgeDays, BLOCK_DEFAULTS.maxAgeDays, 0.01, 3650),
    freshnessHours: num(item.freshnessHours, BLOCK_DEFAULTS.freshnessHours, 0, MAX_FRESHNESS_HOURS),
    envelope: item.envelope === 'legacy' ? 'legacy' : 'smart-section',
    weights: {
      covisit: num(weights.covisit, DEFAULT_WEIGHTS.covisit, 0, 100),
      content: num(weights.content, DEFAULT_WEIGHTS.content, 0, 100),
      preferences: num(weights.preferences, DEFAULT_WEIGHTS.preferences, 0, 100),
      popularity: num(weights.popularity, DEFAULT_WEIGHTS.popularity, 0, 100),
      freshness: num(weights.freshness, DEFAULT_WEIGHTS.freshness, 0, 100),
    },
    siteHosts: storedSiteHosts(client?.siteHosts),
    hosts: hosts && hosts.length > 0 ? hosts : undefined,
    categoryDisplay: Object.fromEntries(Object.entries(display).filter(([, v]) => typeof v === 'string')) as Record<string, string>,
    pins: storedPins(item.pins),
    exclude: storedExclude(item.exclude),
    variants: storedVariants(item.variants),
  };
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : []);

/** Pins as stored (validated when written); malformed entries are dropped. */
function storedPins(value: unknown): Pin[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((p: Record<string, unknown>) => {
    if (!p || typeof p.url !== 'string' || typeof p.position !== 'number' || !Number.isInteger(p.position) || p.position < 1) return [];
    return [{ url: p.url, guid: articleGuid(p.url), position: p.position, ...(typeof p.until === 'number' ? { until: p.until } : {}) }];
  });
}

/** Exclusions as stored: `{urls, categories}` (URLs kept as their guids). */
function storedExclude(value: unknown): BlockSettings['exclude'] {
  const e = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return { guids: strings(e.urls).map(articleGuid), categories: strings(e.categories) };
}

/** Variants as stored (validated when written); malformed entries are dropped. */
function storedVariants(value: unknown): Variant[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((x: Record<string, unknown>) => {
    if (!x || typeof x.name !== 'string' || typeof x.share !== 'number' || !(x.share >= 0 && x.share <= 100)) return [];
    const w = x.weights && typeof x.weights === 'object' ? (x.weights as Record<string, unknown>) : undefined;
    const weights = w ? (Object.fromEntries(Object.entries(w).filter(([k, n]) => k in DEFAULT_WEIGHTS && typeof n === 'number' && n >= 0 && n <= 100)) as Partial<Weights>) : undefined;
    return [{ name: x.name, share: x.share, ...(weights ? { weights } : {}), ...(x.holdout === true ? { holdout: true } : {}) }];
  });
}

/**
 * True when the URL's host is allowed by the client's site hosts (never
 * without them) and, when the block lists `hosts`, is one of them or a
 * subdomain of one.
 */
export function hostAllowed(settings: Pick<BlockSettings, 'hosts' | 'siteHosts'>, url: string): boolean {
  const host = webHostOf(url);
  if (host === null || !siteHostAllowed(settings.siteHosts, host)) return false;
  if (!settings.hosts) return true;
  return settings.hosts.some((h) => host === h || host.endsWith(`.${h}`));
}

/** Lower-case host of http(s) URLs (null for anything else), remembered for the next requests (a URL's host never changes). */
const webHosts = new Map<string, string | null>();

function webHostOf(url: string): string | null {
  let host = webHosts.get(url);
  if (host !== undefined) return host;
  try {
    const parsed = new URL(url);
    host = parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.hostname.toLowerCase() : null;
  } catch {
    host = null;
  }
  if (webHosts.size >= 50_000) webHosts.clear();
  webHosts.set(url, host);
  return host;
}
