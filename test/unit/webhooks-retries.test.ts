/**
 * The webhook retry schedule (shared/webhooks/settings.ts) against what the
 * documentation promises: docs/api.md's delays, the default of
 * WEBHOOK_RETRY_DELAYS in docs/operations.md, the route's OpenAPI text, and
 * "about a day" (Standard Webhooks: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).
 * The hops of delays over SQS's 15 minutes, through the local stack, are in
 * test/integration/webhooks.test.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookRoutes } from '../../shared/routes/webhooks.js';
import { DEFAULT_RETRY_DELAYS, webhookSettings } from '../../shared/webhooks/settings.js';

const doc = (name: string) => readFileSync(resolve(import.meta.dirname, '../../docs', name), 'utf8').replace(/\s+/g, ' ');
const UNIT_SECONDS: Record<string, number> = { s: 1, min: 60, h: 3600 };
/** "5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h" in seconds. */
const seconds = (text: string) => text.split(/, | and /).map((part) => {
  const m = /^(\d+) (s|min|h)$/.exec(part.trim());
  if (!m) throw new Error(`not a delay: ${part}`);
  return Number(m[1]) * UNIT_SECONDS[m[2]];
});

const saved = process.env.WEBHOOK_RETRY_DELAYS;
afterEach(() => {
  if (saved === undefined) delete process.env.WEBHOOK_RETRY_DELAYS;
  else process.env.WEBHOOK_RETRY_DELAYS = saved;
});

describe('the webhook retry schedule', () => {
  it('is the documented one: docs/api.md, the default in docs/operations.md and the OpenAPI description say the same delays', () => {
    const api = /is retried after ([^(]+?) \(Standard Webhooks' schedule, about ([\d.]+) hours in all\)/.exec(doc('api.md'));
    expect(api).not.toBeNull();
    expect(seconds(api![1])).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(DEFAULT_RETRY_DELAYS).toEqual(seconds(api![1]));
    const operations = /\| `WEBHOOK_RETRY_DELAYS` \| `([\d,]+)` \|/.exec(doc('operations.md'));
    expect(operations?.[1].split(',').map(Number)).toEqual(DEFAULT_RETRY_DELAYS);
    const openapi = /retried after (.+?) with the same `webhook-id`/.exec(webhookRoutes.webhooksCreate.description);
    expect(seconds(openapi![1])).toEqual(DEFAULT_RETRY_DELAYS);
    // "About 27.5 hours" and "for about a day" (the issue): the sum, to the half hour.
    const hours = DEFAULT_RETRY_DELAYS.reduce((a, b) => a + b, 0) / 3600;
    expect(Math.round(hours * 2) / 2).toBe(Number(api![2]));
    expect(hours).toBeGreaterThan(24);
    expect(hours).toBeLessThan(28);
    // Each delay at least the one before (backoff).
    expect(DEFAULT_RETRY_DELAYS.every((d, i) => i === 0 || d >= DEFAULT_RETRY_DELAYS[i - 1])).toBe(true);
  });

  it('is the default when WEBHOOK_RETRY_DELAYS is unset or empty; otherwise its comma-separated seconds; anything else refused', () => {
    delete process.env.WEBHOOK_RETRY_DELAYS;
    expect(webhookSettings.retryDelays).toEqual(DEFAULT_RETRY_DELAYS);
    process.env.WEBHOOK_RETRY_DELAYS = '';
    expect(webhookSettings.retryDelays).toEqual(DEFAULT_RETRY_DELAYS);
    process.env.WEBHOOK_RETRY_DELAYS = '0, 1,2000';
    expect(webhookSettings.retryDelays).toEqual([0, 1, 2000]);
    for (const bad of ['5,-1', '5,x', '1.5', '5,,6', '5,', '1e3']) {
      process.env.WEBHOOK_RETRY_DELAYS = bad;
      expect(() => webhookSettings.retryDelays, bad).toThrow(`WEBHOOK_RETRY_DELAYS must be comma-separated seconds, got "${bad}"`);
    }
  });
});
