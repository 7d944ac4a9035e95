/**
 * The browser library (spec 4.12), built by esbuild into one script defining the global `Recos` (getAnonymousUserId,
 * getRecommendations, trackPage, reasonText). Blocks of one page never repeat an article: each request excludes what
 * the page's other blocks show. The API address is the script's origin, or its tag's `data-recos-url`.
 */

interface RecosLibrary {
  version: string;
  apiUrl: string;
  getAnonymousUserId(): string;
  getRecommendations(blockKey: string, userId: string | null | undefined, displayFunctionName: string, numberOfRecos?: number, excludedArticles?: string[], signed?: Signed): void;
  trackPage(clientTrackingKey: string, userId?: string | null, signed?: Signed): Promise<boolean>;
  reasonText(item: { reason?: Reason }): string;
  /** The JSONP callbacks of requests on their way (internal). */
  callbacks: Record<string, (response: unknown) => void>;
}

/** Why an item is recommended (the smart-section envelope's `reason`). */
type Reason = { type: 'covisit'; from: { title: string } } | { type: 'preferences'; theme: string } | { type: 'popular' | 'fresh' | 'pinned' };

/** A signed reader id's signature (computed by the publisher's back end). */
interface Signed {
  sig?: string;
}

const COOKIE = 'recos_uid';
const COOKIE_MAX_AGE = 2 * 365 * 24 * 3600;
const CALLBACK = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

const script = document.currentScript as HTMLScriptElement | null;
const apiUrl = (script?.getAttribute('data-recos-url') || (script?.src ? new URL(script.src, location.href).origin : location.origin)).replace(/\/+$/, '');
let memoryId: string | undefined;

/** `anon-` and 128 random bits in hex: the shape the service recognises as anonymous (no signature needed). */
function randomId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `anon-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [k, ...rest] = part.trim().split('=');
    if (k === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

/** The anonymous reader's id: a first-party cookie created once (in memory when cookies are blocked). */
function getAnonymousUserId(): string {
  const existing = readCookie(COOKIE);
  if (existing && /^anon-[0-9a-f]{32}$/.test(existing)) return existing;
  // A cookie of the first library version (32 hex digits alone) becomes an anonymous id of the current shape.
  const id = memoryId ?? (existing && /^[0-9a-f]{32}$/.test(existing) ? `anon-${existing}` : randomId());
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${COOKIE}=${id}; path=/; max-age=${COOKIE_MAX_AGE}; SameSite=Lax${secure}`;
  memoryId = id;
  return id;
}

const userIdOrAnonymous = (userId: string | null | undefined) => (userId === undefined || userId === null || String(userId).trim() === '' ? getAnonymousUserId() : String(userId));

function meta(...names: string[]): string {
  for (const name of names) {
    const el = document.querySelector<HTMLMetaElement>(`meta[property="${name}"], meta[name="${name}"]`);
    const value = el?.content?.trim();
    if (value) return value;
  }
  return '';
}

const absolute = (url: string) => {
  try {
    return url ? new URL(url, location.href).href : '';
  } catch {
    return '';
  }
};

/** The page's canonical URL (link rel=canonical, og:url, else the address without its fragment). */
function pageUrl(): string {
  const canonical = document.querySelector<HTMLLinkElement>('link[rel="canonical"]')?.href;
  return canonical || absolute(meta('og:url')) || location.href.split('#')[0];
}

/**
 * Records this page view. Sends a form body (a CORS "simple" request: no
 * preflight) with fetch keepalive, or sendBeacon where fetch is missing.
 * Resolves true when the service accepted it (always true for a beacon).
 */
function trackPage(clientTrackingKey: string, userId?: string | null, signed?: Signed): Promise<boolean> {
  const body = new URLSearchParams({
    user_id: userIdOrAnonymous(userId),
    url: pageUrl(),
    title: meta('og:title') || document.title,
    description: meta('og:description', 'description'),
    image: absolute(meta('og:image')),
    category: meta('article:section', 'category'),
    published_time: meta('article:published_time'),
    themes: meta('service:themes'),
  });
  if (signed?.sig) body.set('sig', signed.sig);
  const endpoint = `${apiUrl}/v1/track/${encodeURIComponent(clientTrackingKey)}`;
  if (typeof fetch === 'function') {
    return fetch(endpoint, { method: 'POST', body, keepalive: true, credentials: 'omit', mode: 'cors' }).then(
      (res) => res.ok,
      () => false,
    );
  }
  return Promise.resolve(navigator.sendBeacon(endpoint, body));
}

/** The service answers at most this many `excluded[]` values. */
const MAX_EXCLUDED = 100;
/** Guids each block of the page shows, by block key and display function. */
const shownBy = new Map<string, string[]>();
/** The page's recommendation requests, one after the other (each knows what the previous ones show). */
let queue: Promise<void> = Promise.resolve();
let sequence = 0;
const callbacks: Record<string, (response: unknown) => void> = {};

const guidsOf = (response: unknown): string[] => {
  const r = (response ?? {}) as { result?: { recommendation?: Array<{ guid?: unknown }> }; recommendations?: Array<{ guid?: unknown }> };
  return (r.result?.recommendation ?? r.recommendations ?? []).map((i) => i.guid).filter((g): g is string => typeof g === 'string');
};

function displayFunction(name: string): ((response: unknown) => void) | undefined {
  const fn = name.split('.').reduce<unknown>((scope, part) => (scope as Record<string, unknown> | undefined)?.[part], window);
  return typeof fn === 'function' ? (fn as (response: unknown) => void) : undefined;
}

/**
 * Loads recommendations by JSONP and hands the response to the page's
 * `display_function_name(response)`. The page's URL goes along as `page_url`
 * (browsers send only the origin as referer to another site); the articles
 * the page's other blocks show go along as `excluded[]` guids.
 */
function getRecommendations(blockKey: string, userId: string | null | undefined, displayFunctionName: string, numberOfRecos?: number, excludedArticles?: string[], signed?: Signed): void {
  if (!CALLBACK.test(displayFunctionName)) throw new Error(`Recos: display function name "${displayFunctionName}" is not a global function name`);
  const slot = `${blockKey} ${displayFunctionName}`;
  const user = userIdOrAnonymous(userId);
  queue = queue.then(
    () =>
      new Promise<void>((done) => {
        const name = `c${++sequence}`;
        const query = new URLSearchParams({ callback: `Recos.callbacks.${name}`, page_url: pageUrl() });
        if (numberOfRecos !== undefined && numberOfRecos !== null) query.set('rows', String(numberOfRecos));
        const excluded = (excludedArticles ?? []).map(absolute);
        for (const [other, guids] of shownBy) if (other !== slot) excluded.push(...guids);
        for (const value of [...new Set(excluded)].slice(0, MAX_EXCLUDED)) query.append('excluded[]', value);
        if (signed?.sig) query.set('sig', signed.sig);
        callbacks[name] = (response) => {
          shownBy.set(slot, guidsOf(response));
          displayFunction(displayFunctionName)?.(response);
        };
        const tag = document.createElement('script');
        tag.async = true;
        tag.src = `${apiUrl}/v1/clients/${encodeURIComponent(blockKey)}/users/${encodeURIComponent(user)}/recommendations?${query}`;
        tag.onload = tag.onerror = () => {
          tag.remove();
          delete callbacks[name];
          done();
        };
        document.head.appendChild(tag);
      }),
  );
}

/** The reason of a smart-section item as a sentence for readers, '' when it has none. */
function reasonText(item: { reason?: Reason }): string {
  const reason = item?.reason;
  if (!reason) return '';
  switch (reason.type) {
    case 'covisit':
      return `Because you read “${reason.from.title}”`;
    case 'preferences':
      return `Because you follow ${reason.theme}`;
    case 'popular':
      return 'Popular now';
    case 'fresh':
      return 'Just published';
    case 'pinned':
      return 'Editor’s pick';
    default:
      return '';
  }
}

const library: RecosLibrary = { version: '1', apiUrl, getAnonymousUserId, getRecommendations, trackPage, reasonText, callbacks };
(window as unknown as { Recos: RecosLibrary }).Recos = library;
