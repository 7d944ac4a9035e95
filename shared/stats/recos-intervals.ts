/**
 * Interval estimates of the recommendation statistics: pure functions over
 * counts (unit-tested against published examples in
 * test/unit/recos-intervals.test.ts).
 */

/** The standard normal quantile of a two-sided 95 % interval. */
export const Z95 = 1.959963984540054;

export interface Interval {
  lower: number;
  upper: number;
}

/**
 * Wilson score interval of a proportion `successes / trials` (Wilson 1927;
 * Newcombe 1998, method 3): never outside [0, 1], sound for small counts and
 * proportions near 0, where the Wald interval is not. Undefined for no trials.
 */
export function wilsonInterval(successes: number, trials: number, z = Z95): Interval | undefined {
  if (!(trials > 0)) return undefined;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

/**
 * Ratio of two proportions (x1/n1) / (x2/n2) and its interval by the Katz log
 * method (Katz, Baptista, Azen & Pike 1978): ln ratio ± z·√(1/x1 − 1/n1 +
 * 1/x2 − 1/n2), exponentiated. Undefined when a count is 0 (the log ratio or
 * its variance is infinite) or a group has no trials.
 */
export function ratioInterval(x1: number, n1: number, x2: number, n2: number, z = Z95): (Interval & { ratio: number }) | undefined {
  if (!(x1 > 0 && n1 > 0 && x2 > 0 && n2 > 0)) return undefined;
  const ratio = x1 / n1 / (x2 / n2);
  const se = Math.sqrt(1 / x1 - 1 / n1 + 1 / x2 - 1 / n2);
  const log = Math.log(ratio);
  return { ratio, lower: Math.exp(log - z * se), upper: Math.exp(log + z * se) };
}
