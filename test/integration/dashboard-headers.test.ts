/**
 * The dashboard's page through the local gateway: its CSP admits its own
 * bundle only, not a same-origin JSONP answer (whose callback the caller
 * names), and no page may frame it.
 */
import { describe, expect, it } from 'vitest';
import { request, useService } from '../helpers/service.js';

const service = useService();

/** The sources of one directive of a CSP header. */
function sources(csp: string, directive: string): string[] {
  const entry = csp.split(';').map((d) => d.trim().split(/\s+/)).find(([name]) => name === directive);
  return entry ? entry.slice(1) : [];
}

/**
 * Whether a `<script src=url>` without a nonce would run under these script-src sources (CSP3 matching, the
 * parts this test needs: 'self', scheme-less or full host sources with an optional path; query strings ignored).
 */
function admitsScript(scriptSrc: string[], pageOrigin: string, url: string): boolean {
  const target = new URL(url);
  return scriptSrc.some((s) => {
    if (s === "'self'") return target.origin === pageOrigin;
    if (s.startsWith("'")) return false;
    const source = new URL(s.includes('://') ? s : `${new URL(pageOrigin).protocol}//${s}`);
    if (source.host !== target.host) return false;
    const path = source.pathname;
    return path === '/' || (path.endsWith('/') ? target.pathname.startsWith(path) : target.pathname === path);
  });
}

describe('GET /dashboard', () => {
  it('admits only its own bundle as script (a same-origin JSONP answer calling eval would not run) and refuses framing', async () => {
    const page = await request(`${service.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(sources(csp, 'frame-ancestors')).toEqual(["'none'"]);
    const scriptSrc = sources(csp, 'script-src');
    expect(scriptSrc.length).toBeGreaterThan(0);
    const gadget = `${service.url}/v1/recos/any-block?user_id=u&callback=eval`;
    expect(admitsScript(scriptSrc, service.url, gadget)).toBe(false);
    // The page's own script carries the nonce the CSP names; a fresh one each time.
    const nonce = /<script nonce="([^"]+)" src="\/dashboard\?file=app\.js/.exec(page.text)?.[1];
    expect(scriptSrc).toEqual([`'nonce-${nonce}'`]);
    const again = await request(`${service.url}/dashboard`);
    expect(sources(again.headers.get('content-security-policy') ?? '', 'script-src')).not.toEqual(scriptSrc);
    expect(again.headers.get('cache-control')).toMatch(/no-store/);
  });
});
