/**
 * Imported first by app.ts: when Intl refuses the browser's language (`en-US@posix`), the page's navigator reports the
 * locale format.ts picked instead, before uPlot loads (uPlot builds `new Intl.NumberFormat(navigator.language)` when
 * its module is evaluated, and that RangeError left the page blank).
 */
import { locale } from './format.js';

function accepted(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length > 0;
  } catch {
    return false;
  }
}

if (typeof navigator !== 'undefined' && !accepted(navigator.language)) {
  Object.defineProperty(navigator, 'language', { configurable: true, get: () => locale });
}
