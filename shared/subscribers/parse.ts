/**
 * Turns raw subscriber objects (API bodies, CSV rows) into validated lines
 * (spec 2.4, 2.8) or report errors. Pure.
 */
import * as v from 'valibot';
import { dataFields } from './data.js';
import { LenientSubscriberInputSchema, SubscriberInputSchema } from './schemas.js';
import type { ReportError, SubscriberLine } from './types.js';

/** Longest echo of a given email in a report error: reports stay small whatever the input. */
export const MAX_ECHO = 254;
const echo = (value: string) => (value.length > MAX_ECHO ? `${value.slice(0, MAX_ECHO)}…` : value);

/**
 * Parses one raw subscriber. `lenientSubscribed` (CSV import) treats an
 * invalid `subscribed` as absent instead of an error. Unknown fields that do
 * not start with `data_` are ignored.
 */
export function parseSubscriberLine(
  raw: unknown,
  line: number,
  { lenientSubscribed = false }: { lenientSubscribed?: boolean } = {},
): SubscriberLine | ReportError {
  const given = raw && typeof raw === 'object' ? (raw as { email?: unknown }).email : undefined;
  const rawEmail = typeof given === 'string' ? echo(given) : null;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { line, email: null, cause: 'a subscriber must be a JSON object' };
  const parsed = v.safeParse(lenientSubscribed ? LenientSubscriberInputSchema : SubscriberInputSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    return { line, email: rawEmail, cause: v.getDotPath(issue) === 'email' ? 'email is missing or invalid' : issue.message };
  }
  const input = parsed.output as Record<string, unknown> & v.InferOutput<typeof SubscriberInputSchema>;
  const data = dataFields(input);
  if (typeof data === 'string') return { line, email: rawEmail, cause: data };
  return {
    line,
    email: input.email,
    subscribed: input.subscribed,
    guid: input.guid,
    unsubscribedCause: input.unsubscribed_cause,
    data: Object.keys(data).length > 0 ? data : undefined,
    openTrackingConsent: input.open_tracking_consent,
  };
}

export function isReportError(value: SubscriberLine | ReportError): value is ReportError {
  return 'cause' in value;
}

/** Parses many raw subscribers (1-based line numbers) into lines and errors. */
export function parseSubscriberLines(raws: unknown[], options?: { lenientSubscribed?: boolean }): { lines: SubscriberLine[]; errors: ReportError[] } {
  const lines: SubscriberLine[] = [];
  const errors: ReportError[] = [];
  raws.forEach((raw, i) => {
    const parsed = parseSubscriberLine(raw, i + 1, options);
    if (isReportError(parsed)) errors.push(parsed);
    else lines.push(parsed);
  });
  return { lines, errors };
}
