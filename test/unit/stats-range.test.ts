import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { describeIssues } from '../../shared/validation.js';
import { DateRangeQuerySchema, daysBetween, rangeDays } from '../../shared/stats/range.js';

const problem = (query: Record<string, unknown>) => {
  const r = v.safeParse(DateRangeQuerySchema, query);
  return r.success ? undefined : [describeIssues('query', r.issues).replace(/ \(and .*$/, '')];
};

describe('statistics date range', () => {
  it('accepts one day and a leap year of 366 days', () => {
    expect(problem({ from: '2026-11-26', to: '2026-11-26' })).toBeUndefined();
    expect(problem({ from: '2024-01-01', to: '2024-12-31' })).toBeUndefined();
    expect(rangeDays('2024-01-01', '2024-12-31')).toBe(366);
  });

  it('refuses from after to, a 367th day, a non-day and a missing end with causes that name them', () => {
    expect(problem({ from: '2026-11-27', to: '2026-11-26' })).toEqual(['query: from must not be after to']);
    expect(problem({ from: '2025-01-01', to: '2026-01-02' })).toEqual(['query: from and to must be at most 366 days apart (both included)']);
    expect(problem({ from: '2026-02-30', to: '2026-03-01' })).toEqual(['query.from: from is not a calendar day']);
    expect(problem({ from: '2026-1-1', to: '2026-03-01' })).toEqual(['query.from: from must be a day written YYYY-MM-DD (UTC)']);
    expect(problem({ from: '2026-03-01' })?.[0]).toBe('query.to: is required');
  });

  it('lists the days across a month end and a DST-free UTC calendar', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(daysBetween('0001-01-01', '9999-12-31').length).toBe(rangeDays('0001-01-01', '9999-12-31'));
  });
});
