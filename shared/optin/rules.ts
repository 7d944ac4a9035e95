/** Pure rules of the double opt-in (unit-tested without AWS). */
import type { FormKey } from '../clients/clients.js';

const DAY_MS = 86_400_000;

/**
 * The lists a submission targets. A list form: its own lists (`email_lists`
 * ignored, spec 4.1). A global form: `email_lists`, required and a subset of
 * the form's lists, except for an update, where absent means all of them.
 * Returns the ids, or the cause of a 400.
 */
export function chooseLists(
  form: Pick<FormKey, 'listIds' | 'global'>,
  emailLists: number[] | undefined,
  update: boolean,
  emailListsProblem?: string,
): number[] | string {
  if (!form.global) return [...form.listIds];
  if (emailListsProblem) return emailListsProblem;
  if (!emailLists) return update ? [...form.listIds] : 'body.email_lists: is required for this form (a global opt-in form); choose among its lists ' + form.listIds.join(', ');
  const outside = emailLists.filter((id) => !form.listIds.includes(id));
  if (outside.length) return `body.email_lists: list(s) ${outside.join(', ')} not offered by this form; choose among ${form.listIds.join(', ')}`;
  return emailLists;
}

/** True when a new confirmation email may go out for a pending opt-in last mailed at `lastSentAt`. */
export function resendDue(lastSentAt: string, now: Date, resendMinutes: number): boolean {
  return Date.parse(lastSentAt) + resendMinutes * 60_000 <= now.getTime();
}

export function addDays(iso: string | Date, days: number): string {
  return new Date(new Date(iso).getTime() + days * DAY_MS).toISOString();
}

/** UTC days (YYYY-MM-DD) from `from` to `to`, both included. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); t <= to.getTime(); t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
