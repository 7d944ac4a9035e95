/**
 * `npm start` holds a burst of page views: its own entry (infra/local/start.ts: the gateway, the local queue and its
 * consumer thread, DynamoDB Local) spawned on its own ports and data folder, readers with a real news log's history
 * lengths sending `POST /v1/track`, 16 in flight (bench/recos-start-replay.ts). No consumer batch may fail or time out,
 * no view may be dead-lettered, and every view is answered 200.
 */
import { describe, expect, it } from 'vitest';
import { startReplay } from '../../bench/recos-start-replay.js';

describe('npm start under a burst of page views', () => {
  it('applies 2,000 views of heavy readers with no failed or timed-out batch and no dead letter', { timeout: 90_000 }, async () => {
    const result = await startReplay({ views: 2_000, concurrency: 16, askEveryMs: 250, askAfter: 50, log: () => undefined });
    expect(result.statuses).toEqual({ 200: 2_000 });
    expect(result.failedBatches).toEqual([]);
    expect(result.deadLetters).toEqual([]);
    expect(result.jobLines).toBeGreaterThan(0);
    expect(result.after.errors + result.during.errors).toBe(0);
  });
});
