/**
 * The realistic quality benchmark's small version in npm test
 * (bench/recos-realistic.ts --small --scenario=six-hours --gate=regression):
 * 12,000 views of a generated 6-hour news log (heavy-tailed popularity, most readers 1–3 views, back
 * catalogue, title-only popular articles) through the gateway, the tracking
 * queue (views spread over 5 concurrent batches, as SQS does) and DynamoDB
 * Local, then 1,000 held-out readers. It fails when the consumer loses a
 * reader's read, or when the service falls to most-read (the regression that
 * lost half the hit rate on a real click log). Run as its own process: it
 * starts its own stack. The replay rate is not judged here (the suite shares
 * the machine); `npm run bench:recos:realistic` judges it.
 *
 * No small week here: the week's small log (3,000 articles, 6,000 readers)
 * holds out only 329–385 readers (those active in the last day) and cannot
 * tell the regression it should catch: on its memory-store path the blend
 * without co-reads scores 1.61–1.91× co-visitation, as well as the blend
 * (1.55–1.80×), and popularity alone 1.16–1.51× (seeds 11, 3, 5, 7,
 * docs/benchmarks.md); through the real path it took 65 s (over the 60 s
 * budget).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('recommendations on a realistic news log (small)', () => {
  it('keep every read and beat most-read by 1.2× and plain co-visitation', { timeout: 180_000 }, () => {
    const run = spawnSync('npx', ['tsx', 'bench/recos-realistic.ts', '--small', '--scenario=six-hours', '--gate=regression', '--min-rate=0', '--warm-up=0'], { encoding: 'utf8', timeout: 170_000 });
    const report = `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => /^(Log| {2}|\||FAIL|\d+ readers)/.test(l)).join('\n');
    console.log(report);
    expect(report).toMatch(/kept (\d+) of the held-out readers' \1 training reads/);
    expect(run.status, report).toBe(0);
  });
});
