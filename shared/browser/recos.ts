/**
 * The browser library (spec 4.12), loaded from `{script_url}/v1/`. Built by
 * esbuild into one dependency-free script (`npm run build:lib`) that defines
 * the global `Recos`:
 *
 *   Recos.getAnonymousUserId()
 *   Recos.getRecommendations(block_key, user_id, display_function_name, number_of_recos, excluded_articles, {sig})
 *   Recos.trackPage(client_tracking_key, user_id, {sig})
 *
 * `{sig}` (optional, last): the reader id's signature from the publisher's
 * back end, for clients that require signed reader ids. Anonymous ids
 * (`anon-` + 32 hex digits, 128 random bits) need none.
 *
 * The API address is the script's own origin, or the `data-recos-url`
 * attribute of its script tag.
 */

interface RecosLibrary {
  version: string;
  apiUrl: string;
  getAnonymousUserId(): string;
  getRecommendations(blockKey: string, userId: string | null | undefined, displayFunctionName: string, numberOfRecos?: number, excludedArticles?: string[], signed?: Signed): void;
  trackPage(clientTrackingKey: string, userId?: string | null, signed?: Signed): Promise<boolean>;
}

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

/**
 * Loads recommendations by JSONP: the service answers `display_function_name(response)`.
 * The page's URL goes along as `page_url` (browsers send only the origin as
 * referer to another site).
 */
function getRecommendations(blockKey: string, userId: string | null | undefined, displayFunctionName: string, numberOfRecos?: number, excludedArticles?: string[], signed?: Signed): void {
  if (!CALLBACK.test(displayFunctionName)) throw new Error(`Recos: display function name "${displayFunctionName}" is not a global function name`);
  const query = new URLSearchParams({ callback: displayFunctionName, page_url: pageUrl() });
  if (numberOfRecos !== undefined && numberOfRecos !== null) query.set('rows', String(numberOfRecos));
  for (const url of excludedArticles ?? []) query.append('excluded[]', absolute(url));
  if (signed?.sig) query.set('sig', signed.sig);
  const tag = document.createElement('script');
  tag.async = true;
  tag.src = `${apiUrl}/v1/clients/${encodeURIComponent(blockKey)}/users/${encodeURIComponent(userIdOrAnonymous(userId))}/recommendations?${query}`;
  tag.onload = tag.onerror = () => tag.remove();
  document.head.appendChild(tag);
}

const library: RecosLibrary = { version: '1', apiUrl, getAnonymousUserId, getRecommendations, trackPage };
(window as unknown as { Recos: RecosLibrary }).Recos = library;
