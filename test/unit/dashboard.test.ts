import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildDashboard, generatedModule } from '../../shared/dashboard/build.js';
import { defaultRange, isMissingRoute, pickLocale } from '../../shared/dashboard/format.js';
import { withoutTrailingSlash } from '../../shared/http/router.js';

describe('the publisher dashboard', () => {
  it('serves the bundle the current source builds (run `npm run build:dashboard` after editing shared/dashboard/)', async () => {
    const bundle = await buildDashboard();
    expect(readFileSync('shared/dashboard/bundle.generated.ts', 'utf8')).toBe(generatedModule(bundle));
    // uPlot is bundled (no CDN), with its style sheet; nothing evaluates strings as code (the page's CSP has no unsafe-eval).
    expect(bundle.script).toMatch(/uplot/i);
    expect(bundle.style).toContain('.uplot');
    expect(bundle.script).not.toMatch(/\beval\(|new Function\(/);
  });

  it('defaults to the last 30 days, today (UTC) included', () => {
    expect(defaultRange(new Date('2026-03-01T23:30:00Z'))).toEqual({ from: '2026-01-31', to: '2026-03-01' });
  });

  it("tells the fallback's 404 (route not deployed) from a route's own 404", () => {
    expect(isMissingRoute(404, 'No route for GET /v1/stats/events/daily')).toBe(true);
    expect(isMissingRoute(404, 'Unknown list')).toBe(false);
    expect(isMissingRoute(405, 'No route for GET /x')).toBe(false);
  });

  it('sends a GET with a trailing slash to the row without it, and nothing else', () => {
    expect(withoutTrailingSlash('GET', '/dashboard/')).toBe('/dashboard');
    expect(withoutTrailingSlash('GET', '/v1/docs//')).toBe('/v1/docs');
    expect(withoutTrailingSlash('POST', '/dashboard/')).toBeUndefined();
    expect(withoutTrailingSlash('GET', '/nothing/')).toBeUndefined();
    expect(withoutTrailingSlash('GET', '/')).toBeUndefined();
  });

  it('takes the first language Intl accepts; a tag it refuses (en-US@posix, headless browsers under LANG=C.UTF-8) falls back to en', () => {
    expect(() => new Intl.NumberFormat('en-US@posix')).toThrow(RangeError);
    expect(pickLocale(['en-US@posix'])).toBe('en');
    expect(pickLocale(['en-US@posix', 'de-DE'])).toBe('de-DE');
    expect(pickLocale(['en-gb'])).toBe('en-GB');
    expect(pickLocale(['', 'x-@@', 'fr-CA'])).toBe('fr-CA');
    expect(pickLocale([])).toBe('en');
  });
});
