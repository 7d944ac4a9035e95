import { describe, expect, it } from 'vitest';
import type { ViewBatchStore } from '../../shared/recos/port.js';
import { consumeViews } from '../../shared/recos/view-queue.js';
import { applyRecoCounts, groupRecoCounts, parseRecoCount, type RecoCountGroup } from '../../shared/recos/reco-counts.js';

const t = Date.parse('2026-11-26T23:59:59Z') / 1000;
const count = (id: string, over: Partial<Parameters<typeof groupRecoCounts>[0][number]> = {}) => ({ id, clientId: 'c', blockKey: 'b', variant: 'A', t, served: 1, impressions: 4, clicks: 0, ...over });

describe('recommendation counts of a batch', () => {
  it('sums per client, block, variant and UTC day, keeping the message ids of each group', () => {
    const groups = groupRecoCounts([
      count('1'),
      count('2', { served: 0, impressions: 0, clicks: 1 }),
      count('3', { variant: 'H' }),
      count('4', { t: t + 1 }), // the next UTC day
      count('5', { blockKey: 'other' }),
      count('6', { impressions: 3 }),
    ]);
    expect(groups.map(({ blockKey, variant, day, served, impressions, clicks, ids }) => [blockKey, variant, day, served, impressions, clicks, ids])).toEqual([
      ['b', 'A', '2026-11-26', 2, 7, 1, ['1', '2', '6']],
      ['b', 'H', '2026-11-26', 1, 4, 0, ['3']],
      ['b', 'A', '2026-11-27', 1, 4, 0, ['4']],
      ['other', 'A', '2026-11-26', 1, 4, 0, ['5']],
    ]);
  });

  it("a failed group's messages come back for redelivery; the other groups are added once", async () => {
    const added: RecoCountGroup[] = [];
    const store = {
      addCounts: (g: RecoCountGroup) => {
        if (g.variant === 'H') return Promise.reject(new Error('throttled'));
        added.push(g);
        return Promise.resolve();
      },
    };
    const failed = await applyRecoCounts(store, groupRecoCounts([count('1'), count('2', { variant: 'H' }), count('3', { variant: 'H' }), count('4')]));
    expect(failed).toEqual(['2', '3']);
    expect(added.map((g) => [g.variant, g.served, g.ids])).toEqual([['A', 2, ['1', '4']]]);
  });

  it("a batch whose page views fail (the store throws) redelivers its views only: the counts beside them are added once", async () => {
    const added: RecoCountGroup[] = [];
    const counts = { addCounts: (g: RecoCountGroup) => (added.push(g), Promise.resolve()) };
    let viewsTried = 0;
    const failing = {
      recordViews: () => {
        viewsTried++;
        return Promise.reject(new Error('throttled'));
      },
    } as unknown as ViewBatchStore;
    const message = (messageId: string, body: object) => ({ messageId, body: JSON.stringify({ v: 1, clientId: 'c', t, ...body }) });
    const event = {
      Records: [
        message('v1', { view: { userId: 'u1', url: 'https://news.example/a' } }),
        message('c1', { count: { blockKey: 'b', variant: 'A', served: 1, impressions: 4, clicks: 0 } }),
        message('c2', { count: { blockKey: 'b', variant: 'A', served: 0, impressions: 0, clicks: 1 } }),
      ],
    };
    const out = await consumeViews(failing, event, counts);
    expect(viewsTried).toBe(1);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'v1' }]);
    expect(added.map((g) => [g.variant, g.served, g.impressions, g.clicks, g.ids])).toEqual([['A', 1, 4, 1, ['c1', 'c2']]]);
    // Without counts in the batch, a throw still fails the whole batch (SQS delivers it again), as before.
    await expect(consumeViews(failing, { Records: [event.Records[0]] }, counts)).rejects.toThrow('throttled');
  });

  it('reads only well-formed counts from a message', () => {
    const ok = { blockKey: 'b', variant: 'A', served: 1, impressions: 10, clicks: 0 };
    expect(parseRecoCount('c', t, ok)).toEqual({ clientId: 'c', t, ...ok });
    expect(parseRecoCount(undefined, t, ok)).toBeUndefined();
    expect(parseRecoCount('c', 'now', ok)).toBeUndefined();
    expect(parseRecoCount('c', t, { ...ok, impressions: -1 })).toBeUndefined();
    expect(parseRecoCount('c', t, { ...ok, clicks: 1.5 })).toBeUndefined();
    expect(parseRecoCount('c', t, { ...ok, variant: undefined })).toBeUndefined();
    expect(parseRecoCount('c', t, undefined)).toBeUndefined();
  });
});
