import { describe, expect, it } from 'vitest';
import { assignVariant, bucketOf, countedVariant, HOLDOUT_WEIGHTS, newRecommId, variantSettings } from '../../shared/recos/experiments.js';
import { linkRid, memberRecommId, verifyRid } from '../../shared/recos/recomm-ids.js';
import { blockSettings } from '../../shared/recos/settings.js';
import type { Variant } from '../../shared/recos/types.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `reader-${i}`);

describe('assignVariant', () => {
  const variants: Variant[] = [
    { name: 'A', share: 30 },
    { name: 'B', share: 20, weights: { covisit: 2 } },
    { name: 'control', share: 10, holdout: true },
  ];

  it('splits 10,000 readers by the shares (each within 1.5 points), the remainder to default', () => {
    const counts = new Map<string, number>();
    for (const id of ids(10_000)) {
      const name = assignVariant('block-1', id, variants)?.name ?? 'default';
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    // Binomial standard deviation at n = 10,000 is at most 0.5 points: 1.5 points is 3 of them.
    expect(Math.abs(counts.get('A')! / 100 - 30)).toBeLessThan(1.5);
    expect(Math.abs(counts.get('B')! / 100 - 20)).toBeLessThan(1.5);
    expect(Math.abs(counts.get('control')! / 100 - 10)).toBeLessThan(1.5);
    expect(Math.abs(counts.get('default')! / 100 - 40)).toBeLessThan(1.5);
  });

  it('is stable: the same reader of a block always has the same variant; another block draws again', () => {
    const first = ids(500).map((id) => assignVariant('block-1', id, variants)?.name);
    const again = ids(500).map((id) => assignVariant('block-1', id, [...variants])?.name);
    expect(again).toEqual(first);
    const other = ids(500).map((id) => assignVariant('block-2', id, variants)?.name);
    expect(other).not.toEqual(first);
    const points = ids(1000).map((id) => bucketOf('b', id));
    expect(Math.min(...points)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...points)).toBeLessThan(100);
  });

  it('no variants: every reader is default; shares of 100: nobody is', () => {
    expect(ids(100).every((id) => assignVariant('b', id, []) === undefined)).toBe(true);
    expect(ids(1000).every((id) => assignVariant('b', id, [{ name: 'X', share: 60 }, { name: 'Y', share: 40 }]) !== undefined)).toBe(true);
  });

  it('a variant named default or newsletter takes nobody (reserved names)', () => {
    expect(ids(1000).every((id) => assignVariant('b', id, [{ name: 'default', share: 50 }, { name: 'newsletter', share: 50 }]) === undefined)).toBe(true);
  });
});

describe('variantSettings', () => {
  const block = blockSettings({ kind: 'block', clientId: 'c', weights: { covisit: 3 } }, undefined);

  it("a variant's weights override the block's, the rest kept; a holdout ranks by popularity alone", () => {
    expect(variantSettings(block, undefined)).toBe(block);
    expect(variantSettings(block, { name: 'B', share: 10, weights: { content: 0.9 } }).weights).toEqual({ ...block.weights, covisit: 3, content: 0.9 });
    const holdout = variantSettings(block, { name: 'H', share: 10, holdout: true, weights: { content: 1 } });
    expect(holdout.weights).toEqual(HOLDOUT_WEIGHTS);
    expect(holdout.maxAgeDays).toBe(block.maxAgeDays);
  });
});

describe('recomm_id', () => {
  const variants: Variant[] = [{ name: 'B', share: 50 }];

  it('is <variant>.<16 base64url characters>, new each time', () => {
    const id = newRecommId('B');
    expect(id).toMatch(/^B\.[A-Za-z0-9_-]{16}$/);
    expect(newRecommId('B')).not.toBe(id);
  });

  it('counts a click for configured variants, default and newsletter only', () => {
    expect(countedVariant('B', variants)).toBe('B');
    expect(countedVariant('default', variants)).toBe('default');
    expect(countedVariant('newsletter', variants)).toBe('newsletter');
    expect(countedVariant('forged', variants)).toBeUndefined();
    expect(countedVariant('b', variants)).toBeUndefined();
    expect(countedVariant(undefined, variants)).toBeUndefined();
  });

  it("a link's rid verifies only for the block and article it was signed for, under the client's secret", () => {
    const id = newRecommId('B');
    const rid = linkRid('secret', 'block-1', id, 'guid-1');
    expect(rid).toMatch(/^B\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{16}$/);
    expect(verifyRid('secret', 'block-1', 'guid-1', rid)).toEqual({ variant: 'B', recommId: id });
    expect(verifyRid('secret', 'block-1', 'guid-2', rid)).toBeUndefined();
    expect(verifyRid('secret', 'block-2', 'guid-1', rid)).toBeUndefined();
    expect(verifyRid('other', 'block-1', 'guid-1', rid)).toBeUndefined();
    expect(verifyRid(undefined, 'block-1', 'guid-1', rid)).toBeUndefined();
    expect(verifyRid('secret', 'block-1', 'guid-1', id)).toBeUndefined();
    expect(verifyRid('secret', 'block-1', 'guid-1', rid.replace(/^B/, 'C'))).toBeUndefined();
    expect(verifyRid('secret', 'block-1', 'guid-1', undefined)).toBeUndefined();
  });

  it("a newsletter member's id is stable for the request and the member, and differs between members", () => {
    const request = newRecommId('newsletter');
    const ann = memberRecommId('secret', request, 'ann');
    expect(ann).toMatch(/^newsletter\.[A-Za-z0-9_-]{16}$/);
    expect(memberRecommId('secret', request, 'ann')).toBe(ann);
    expect(memberRecommId('secret', request, 'bob')).not.toBe(ann);
  });
});
