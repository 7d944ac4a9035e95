/**
 * The realistic quality benchmark's small version (bench/recos-realistic.ts --small --scenario=six-hours): fails when
 * the consumer loses a reader's read or the service falls to most-read. Not the small week: it holds out too few
 * readers to tell that regression (docs/benchmarks.md). The replay rate is judged by `npm run bench:recos:realistic`.
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
