import * as v from 'valibot';

/**
 * A valibot failure as a `cause` that names the failing field and the
 * problem: `body.email: Invalid email`. The HTTP stack (request validation)
 * and domain services that validate line by line (the catalogue) use it.
 */
export function describeIssues(where: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const first = issues[0];
  const path = v.getDotPath(first);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem(s))` : '';
  const missingKey = ['object', 'loose_object', 'strict_object'].includes(first.type) && first.received === 'undefined';
  return `${path ? `${where}.${path}` : where}: ${missingKey ? 'is required' : first.message}${more}`;
}
