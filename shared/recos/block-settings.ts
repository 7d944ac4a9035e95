/**
 * A client's recommendation blocks and their settings as the API and admin CLI read and write them: public
 * snake_case names, validated with causes naming the field. The stored camelCase names are what `blockSettings()`
 * (settings.ts) reads for every recommendation.
 */
import { createBlock, getClient, listBlocks, requireClient, resolvePublicKey, updateBlock, type BlockKey } from '../clients/clients.js';
import { siteUrlAllowed, storedSiteHosts } from '../clients/site-hosts.js';
import { BLOCK_LIMITS } from './block-schemas.js';
import { InvalidBlockSettingsError, UnknownBlockKeyError } from './errors.js';
import { RESERVED_VARIANTS, VARIANT_NAME } from './experiments.js';
import { toUnixSeconds } from './schemas.js';
import { blockSettings, BLOCK_DEFAULTS, DEFAULT_WEIGHTS, MAX_FRESHNESS_HOURS, MAX_ROWS_CEILING } from './settings.js';
import type { Weights } from './types.js';
import { canonicalUrl } from './urls.js';

/** Public name → stored attribute of every block setting. */
const STORED = {
  name: 'name',
  rows: 'rows',
  max_rows: 'maxRows',
  max_age_days: 'maxAgeDays',
  freshness_hours: 'freshnessHours',
  envelope: 'envelope',
  weights: 'weights',
  hosts: 'hosts',
  category_display: 'categoryDisplay',
  pins: 'pins',
  exclude: 'exclude',
  variants: 'variants',
} as const;
export type BlockSettingName = keyof typeof STORED;
export const BLOCK_SETTING_NAMES = Object.keys(STORED) as BlockSettingName[];

/** A block as the API answers it: its key and its settings, defaults applied. */
export interface PublicBlock {
  block_key: string;
  created_at?: string;
  settings: {
    name?: string;
    rows: number;
    max_rows: number;
    max_age_days: number;
    freshness_hours: number;
    envelope: 'smart-section' | 'legacy';
    weights: Weights;
    hosts: string[] | null;
    category_display: Record<string, string>;
    pins: Array<{ url: string; position: number; until?: number }>;
    exclude: { urls: string[]; categories: string[] };
    variants: Array<{ name: string; share: number; weights?: Partial<Weights>; holdout?: boolean }>;
  };
}

const fail = (field: string, rule: string): never => {
  throw new InvalidBlockSettingsError(field, `body.${field}: ${rule}`);
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function number(field: string, value: unknown, min: number, max: number, integer: boolean): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fail(field, 'must be a number');
  if (integer && !Number.isInteger(value)) return fail(field, 'must be an integer');
  if (value < min || value > max) return fail(field, `must be from ${min} to ${max}`);
  return value;
}

function string(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string') return fail(field, 'must be a string');
  if (value.trim() === '') return fail(field, 'must not be empty');
  if (value.length > max) return fail(field, `must be at most ${max} characters`);
  return value;
}

function array(field: string, value: unknown, max: number): unknown[] {
  if (!Array.isArray(value)) return fail(field, 'must be an array');
  if (value.length > max) return fail(field, `at most ${max} entries`);
  return value;
}

function weights(field: string, value: unknown): Partial<Weights> {
  if (!isObject(value)) return fail(field, 'must be an object of weights');
  const out: Partial<Weights> = {};
  for (const [signal, weight] of Object.entries(value)) {
    if (!Object.hasOwn(DEFAULT_WEIGHTS, signal)) fail(`${field}.${signal}`, `not a signal (one of ${Object.keys(DEFAULT_WEIGHTS).join(', ')})`);
    out[signal as keyof Weights] = number(`${field}.${signal}`, weight, 0, 100, false);
  }
  return out;
}

/** A pin or exclusion URL: absolute http(s), on the client's site hosts; stored canonical. */
function siteUrl(field: string, value: unknown, siteHosts: string[]): string {
  const raw = string(field, value, 2048);
  const url = canonicalUrl(raw);
  if (!url) return fail(field, 'must be an absolute http(s) URL');
  if (!siteUrlAllowed(siteHosts, url)) return fail(field, `host ${new URL(url).hostname} is not one of the client's site hosts`);
  return url;
}

function host(field: string, value: unknown): string {
  const raw = string(field, value, 253).toLowerCase();
  if (/[\s/?#@\\%:[\]*]/.test(raw) || raw.startsWith('.') || raw.endsWith('.') || raw.includes('..')) return fail(field, 'must be a host name (e.g. news.example.com)');
  return raw;
}

/** One setting, validated, in its stored form. `maxRows`: the block's length after the update (pin positions). */
function storedValue(name: BlockSettingName, value: unknown, siteHosts: string[], now: number): unknown {
  switch (name) {
    case 'name':
      return string('name', value, BLOCK_LIMITS.name);
    case 'rows':
      return number('rows', value, 1, MAX_ROWS_CEILING, true);
    case 'max_rows':
      return number('max_rows', value, 1, MAX_ROWS_CEILING, true);
    case 'max_age_days':
      return number('max_age_days', value, 0.01, 3650, false);
    case 'freshness_hours':
      return number('freshness_hours', value, 0, MAX_FRESHNESS_HOURS, false);
    case 'envelope':
      return value === 'smart-section' || value === 'legacy' ? value : fail('envelope', 'must be smart-section or legacy');
    case 'weights':
      return weights('weights', value);
    case 'hosts':
      return [...new Set(array('hosts', value, BLOCK_LIMITS.hosts).map((h, i) => host(`hosts[${i}]`, h)))];
    case 'category_display': {
      if (!isObject(value)) return fail('category_display', 'must be an object of category → display name');
      const entries = Object.entries(value);
      if (entries.length > BLOCK_LIMITS.categories) fail('category_display', `at most ${BLOCK_LIMITS.categories} categories`);
      for (const [category, display] of entries) {
        if (category.length > BLOCK_LIMITS.category) fail('category_display', `a category is at most ${BLOCK_LIMITS.category} characters`);
        string(`category_display.${category}`, display, BLOCK_LIMITS.category);
      }
      return value;
    }
    case 'pins':
      return array('pins', value, BLOCK_LIMITS.pins).map((pin, i) => {
        const field = `pins[${i}]`;
        if (!isObject(pin)) return fail(field, 'must be an object {url, position, until?}');
        for (const k of Object.keys(pin)) if (!['url', 'position', 'until'].includes(k)) fail(`${field}.${k}`, 'not a pin field (url, position, until)');
        const url = siteUrl(`${field}.url`, pin.url, siteHosts);
        const position = number(`${field}.position`, pin.position, 1, MAX_ROWS_CEILING, true);
        if (pin.until === undefined || pin.until === null) return { url, position };
        if (typeof pin.until !== 'number' && typeof pin.until !== 'string') return fail(`${field}.until`, 'must be Unix seconds or an ISO 8601 date');
        const until = toUnixSeconds(pin.until);
        if (until === undefined) return fail(`${field}.until`, 'must be Unix seconds or an ISO 8601 date');
        if (until <= now) return fail(`${field}.until`, 'is in the past');
        return { url, position, until };
      });
    case 'exclude': {
      if (!isObject(value)) return fail('exclude', 'must be an object {urls, categories}');
      for (const k of Object.keys(value)) if (k !== 'urls' && k !== 'categories') fail(`exclude.${k}`, 'not an exclusion (urls, categories)');
      const urls = array('exclude.urls', value.urls ?? [], BLOCK_LIMITS.excludedUrls).map((u, i) => siteUrl(`exclude.urls[${i}]`, u, siteHosts));
      const categories = array('exclude.categories', value.categories ?? [], BLOCK_LIMITS.excludedCategories).map((c, i) => string(`exclude.categories[${i}]`, c, BLOCK_LIMITS.category));
      return { urls: [...new Set(urls)], categories: [...new Set(categories)] };
    }
    case 'variants': {
      const variants = array('variants', value, BLOCK_LIMITS.variants).map((x, i) => {
        const field = `variants[${i}]`;
        if (!isObject(x)) return fail(field, 'must be an object {name, share, weights?, holdout?}');
        for (const k of Object.keys(x)) if (!['name', 'share', 'weights', 'holdout'].includes(k)) fail(`${field}.${k}`, 'not a variant field (name, share, weights, holdout)');
        if (typeof x.name !== 'string' || !VARIANT_NAME.test(x.name)) return fail(`${field}.name`, 'must be 1 to 32 letters, digits, "_" or "-"');
        if (RESERVED_VARIANTS.includes(x.name.toLowerCase())) return fail(`${field}.name`, `"${x.name}" is reserved (${RESERVED_VARIANTS.join(', ')})`);
        const share = number(`${field}.share`, x.share, 0, 100, false);
        if (x.holdout !== undefined && typeof x.holdout !== 'boolean') fail(`${field}.holdout`, 'must be true or false');
        return {
          name: x.name,
          share,
          ...(x.weights !== undefined ? { weights: weights(`${field}.weights`, x.weights) } : {}),
          ...(x.holdout === true ? { holdout: true } : {}),
        };
      });
      // Regardless of case: `A` and `a` would read as one variant in a report or a `rid`.
      const names = variants.map((x) => x.name.toLowerCase());
      names.forEach((n, i) => names.indexOf(n) !== i && fail(`variants[${i}].name`, `"${variants[i].name}" is named twice${variants[names.indexOf(n)].name === variants[i].name ? '' : ' (names are compared regardless of case)'}`));
      if (variants.reduce((s, x) => s + x.share, 0) > 100) fail('variants', 'the shares add up to more than 100');
      if (variants.filter((x) => x.holdout).length > 1) fail('variants', 'at most one holdout variant');
      return variants;
    }
  }
}

/**
 * The stored changes of a settings body: each given top-level setting
 * replaces the block's (a JSON merge; `null` resets it to its default),
 * validated against the block as it will be (pin positions within
 * `max_rows`). Throws InvalidBlockSettingsError naming the first bad field.
 */
export function settingsChanges(body: unknown, current: Record<string, unknown>, siteHosts: string[], now = Math.floor(Date.now() / 1000)): { set: Record<string, unknown>; remove: string[] } {
  if (!isObject(body)) throw new InvalidBlockSettingsError('body', 'body: must be a JSON object of block settings');
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (!Object.hasOwn(STORED, name)) fail(name, `not a block setting (one of ${BLOCK_SETTING_NAMES.join(', ')})`);
    const stored = STORED[name as BlockSettingName];
    if (value === null) remove.push(stored);
    else set[stored] = storedValue(name as BlockSettingName, value, siteHosts, now);
  }
  const after: Record<string, unknown> = { ...current, ...set };
  for (const name of remove) delete after[name];
  const maxRows = typeof after.maxRows === 'number' ? after.maxRows : BLOCK_DEFAULTS.maxRows;
  const pins = (Array.isArray(after.pins) ? after.pins : []) as Array<{ position: number }>;
  const field = 'pins' in set ? 'pins' : 'max_rows';
  pins.forEach((pin, i) => {
    if (pin.position > maxRows) fail(field === 'pins' ? `pins[${i}].position` : 'max_rows', field === 'pins' ? `must be from 1 to max_rows (${maxRows})` : `${maxRows} is less than the position of pin ${i} (${pin.position})`);
    if (pins.findIndex((p) => p.position === pin.position) !== i) fail(`pins[${i}].position`, `position ${pin.position} is pinned twice`);
  });
  // A `rows` of its own above `max_rows` would be cut silently (a default `rows` is cut to `max_rows` by design).
  if (typeof after.rows === 'number' && after.rows > maxRows) fail('rows' in set ? 'rows' : 'max_rows', `rows (${after.rows}) must not be more than max_rows (${maxRows})`);
  // The settings live on the block key item: within DynamoDB's 400 KB an item may hold.
  const bytes = Buffer.byteLength(JSON.stringify(after));
  if (bytes > MAX_SETTINGS_BYTES) {
    const largest = Object.entries(body).sort(([, a], [, b]) => JSON.stringify(b ?? '').length - JSON.stringify(a ?? '').length)[0]?.[0] ?? 'body';
    fail(largest, `the block's settings would take ${Math.ceil(bytes / 1024)} KB, more than ${MAX_SETTINGS_BYTES / 1024} KB`);
  }
  return { set, remove };
}

/** Most bytes a block's settings may take (as JSON): its key item must stay well within DynamoDB's 400 KB. */
export const MAX_SETTINGS_BYTES = 300 * 1024;

/** A block key item as the API answers it. */
export function publicBlock(blockKey: string, item: BlockKey): PublicBlock {
  const s = blockSettings(item, undefined);
  const exclude = isObject(item.exclude) ? item.exclude : {};
  return {
    block_key: blockKey,
    ...(typeof item.createdAt === 'string' && item.createdAt ? { created_at: item.createdAt } : {}),
    settings: {
      ...(typeof item.name === 'string' ? { name: item.name } : {}),
      rows: s.rows,
      max_rows: s.maxRows,
      max_age_days: s.maxAgeDays,
      freshness_hours: s.freshnessHours,
      envelope: s.envelope,
      weights: s.weights,
      hosts: s.hosts ?? null,
      category_display: s.categoryDisplay,
      pins: s.pins.map((p) => ({ url: p.url, position: p.position, ...(p.until !== undefined ? { until: p.until } : {}) })),
      exclude: {
        urls: Array.isArray(exclude.urls) ? exclude.urls.filter((u): u is string => typeof u === 'string') : [],
        categories: s.exclude.categories,
      },
      variants: s.variants,
    },
  };
}

/** The client's blocks with their settings, oldest first. */
export async function clientBlocks(clientId: string): Promise<PublicBlock[]> {
  return (await listBlocks(clientId)).map((item) => publicBlock(item.blockKey, item));
}

/** One block of the client; another client's block or an unknown key: UnknownBlockKeyError. */
export async function clientBlock(clientId: string, blockKey: string): Promise<PublicBlock> {
  const item = await resolvePublicKey('block', blockKey);
  if (!item || item.clientId !== clientId) throw new UnknownBlockKeyError(blockKey);
  return publicBlock(blockKey, item);
}

/**
 * Updates a block's settings (a JSON merge of the given top-level settings)
 * and answers the block as it now is. Warm recommendation containers apply it
 * within BLOCK_KEY_CACHE_SECONDS (shared/recos/service.ts).
 */
export async function putBlockSettings(clientId: string, blockKey: string, body: unknown): Promise<PublicBlock> {
  const item = await resolvePublicKey('block', blockKey);
  if (!item || item.clientId !== clientId) throw new UnknownBlockKeyError(blockKey);
  const client = await getClient(clientId);
  const { set, remove } = settingsChanges(body, item, storedSiteHosts(client?.siteHosts));
  if (!(await updateBlock(clientId, blockKey, set, remove))) throw new UnknownBlockKeyError(blockKey);
  const updated: Record<string, unknown> = { ...item, ...set };
  for (const name of remove) delete updated[name];
  return publicBlock(blockKey, updated as BlockKey);
}

/** Creates a block with settings validated as `PUT /v1/blocks/{block_key}` validates them (`admin create-block`). */
export async function createBlockWithSettings(clientId: string, body: unknown = {}): Promise<PublicBlock> {
  const client = await requireClient(clientId);
  const { set } = settingsChanges(body, {}, storedSiteHosts(client.siteHosts));
  const blockKey = await createBlock(clientId, set);
  return clientBlock(clientId, blockKey);
}
