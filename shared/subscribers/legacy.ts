/**
 * The deprecated list-less subscribers API (spec 4.10): the list API's
 * services on the client's default list, with the old error shape.
 */
import { requireClient } from '../clients/clients.js';
import { InvalidLegacyBatchError } from './errors.js';
import { parseSubscriberLines } from './parse.js';
import { LEGACY_PROFILE_FIELDS, MAX_LINES } from './schemas.js';
import { applySubscribers } from './service.js';
import type { Report, ReportError } from './types.js';

/** Deprecated since 2026-01-01, sunset 2027-12-31 (the spec shows no dates; these are ours). */
export const DEPRECATED_SINCE = Date.UTC(2026, 0, 1);
export const SUNSET = Date.UTC(2027, 11, 31);

/** RFC 9745 `Deprecation`, RFC 8594 `Sunset` and a `Link` to the list-scoped successor. */
export function deprecationHeaders(defaultListId: number, successor: 'subscribers' | 'count'): Record<string, string> {
  const path = `/v1/newsletters/lists/${defaultListId}/subscribers${successor === 'count' ? '/count' : ''}`;
  return {
    deprecation: `@${Math.floor(DEPRECATED_SINCE / 1000)}`,
    sunset: new Date(SUNSET).toUTCString(),
    link: `<${path}>; rel="successor-version"`,
  };
}

/** The client's default list (created with the client). */
export async function defaultListOf(clientId: string): Promise<number> {
  return (await requireClient(clientId)).defaultListId;
}

/**
 * The deprecated POST: one object (with profile fields pseudo, first_name,
 * last_name, location, segment, kept as data_<name>) or an array. Any
 * invalid line rejects the whole request with line numbers; nothing is written.
 */
export async function legacySubscribe(clientId: string, body: unknown): Promise<{ listId: number; count: number; report: Report }> {
  const raws = Array.isArray(body) ? (body as unknown[]) : [body];
  if (raws.length === 0) throw new InvalidLegacyBatchError('1 error(s): the array is empty');
  if (raws.length > MAX_LINES) throw new InvalidLegacyBatchError(`1 error(s): at most ${MAX_LINES} subscribers per request, got ${raws.length}`);
  const profileErrors: ReportError[] = [];
  const withProfile = raws.map((raw, i) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const entry = { ...(raw as Record<string, unknown>) };
    for (const field of LEGACY_PROFILE_FIELDS) {
      if (!(field in entry)) continue;
      const value = entry[field];
      if (value !== null && typeof value !== 'string') profileErrors.push({ line: i + 1, email: null, cause: `${field} must be a string` });
      entry[`data_${field}`] = value;
      delete entry[field];
    }
    return entry;
  });
  const parsed = parseSubscriberLines(withProfile);
  const lines = parsed.lines.filter((l) => !profileErrors.some((e) => e.line === l.line));
  const errors = [...profileErrors, ...parsed.errors.filter((e) => !profileErrors.some((p) => p.line === e.line))].sort((a, b) => a.line - b.line);
  if (errors.length > 0) {
    const shown = errors.slice(0, 50).map((e) => `L${e.line}: ${e.cause}`);
    throw new InvalidLegacyBatchError(`${errors.length} error(s): ${shown.join(', ')}${errors.length > 50 ? `, … (${errors.length - 50} more)` : ''}`);
  }
  const listId = await defaultListOf(clientId);
  return { listId, count: lines.length, report: await applySubscribers(clientId, listId, lines) };
}
