/**
 * Chromium for e2e tests, driven by playwright-core. The binary comes from the
 * `@sparticuz/chromium` registry package (it ships Chromium inside the package
 * and unpacks it on first use): no system browser, no download at install.
 */
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

// Flags of the package that would make the browser lie in a test: CORS and
// mixed-content checks must stay on, or a CORS test cannot fail.
// One browser serves several pages in a test file; in a single process the second page dies.
const DROPPED = new Set(['--disable-web-security', '--allow-running-insecure-content', '--disable-site-isolation-trials', '--single-process']);

export async function launchChromium(): Promise<Browser> {
  const args = sparticuz.args.filter((a) => !DROPPED.has(a));
  return chromium.launch({ executablePath: await sparticuz.executablePath(), args: [...args, '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}
