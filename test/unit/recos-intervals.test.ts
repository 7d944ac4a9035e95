import { describe, expect, it } from 'vitest';
import { ratioInterval, wilsonInterval } from '../../shared/stats/recos-intervals.js';

describe('wilsonInterval (95 %)', () => {
  // Newcombe RG (1998). Two-sided confidence intervals for the single proportion: comparison of seven methods.
  // Statistics in Medicine 17:857–872, Table I, method 3 (score interval without continuity correction).
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])('%i/%i is (%f, %f) as in Newcombe 1998, Table I', (x, n, lower, upper) => {
    const ci = wilsonInterval(x, n)!;
    expect(ci.lower).toBeCloseTo(lower, 4);
    expect(ci.upper).toBeCloseTo(upper, 4);
  });

  it('no trials: no interval', () => {
    expect(wilsonInterval(0, 0)).toBeUndefined();
  });
});

describe('ratioInterval (Katz log method, 95 %)', () => {
  // Biostatistics For Dummies, 2nd ed. (Wiley), ch. 13, Listing 13-1: the printed output of R epitools::riskratio.wald
  // (the log method) on the fourfold table obese_HTN = matrix(c(14, 12, 7, 27), 2): 27/39 against 7/21 is
  // 2.076923, 95 % CI 1.09512 to 3.938939.
  it('27/39 against 7/21 is 2.076923 (1.09512, 3.938939)', () => {
    const r = ratioInterval(27, 39, 7, 21)!;
    expect(r.ratio).toBeCloseTo(2.076923, 6);
    expect(r.lower).toBeCloseTo(1.09512, 5);
    expect(r.upper).toBeCloseTo(3.938939, 5);
  });

  it('a zero count has no interval (infinite log variance)', () => {
    expect(ratioInterval(0, 10, 3, 10)).toBeUndefined();
    expect(ratioInterval(3, 10, 0, 10)).toBeUndefined();
    expect(ratioInterval(3, 0, 3, 10)).toBeUndefined();
  });
});
