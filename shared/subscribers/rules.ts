/**
 * Pure subscription rules (spec §3, 2.4, 2.6): how one line changes one
 * stored subscriber, what the report counts, and how the list counters move.
 * No I/O: unit-tested directly.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { jsonBytes } from '../db/storable.js';
import type { EventRecord } from '../events/types.js';
import { MAX_STORED_DATA_BYTES } from './data.js';
import type { ConsentRecord, Report, ReportError, SubscriberLine, UnsubscribeCause } from './types.js';

/** What applying one line did, as the report counts it. */
export interface Outcome {
  created: boolean;
  /** Became subscribed (new address subscribed, or unsubscribed address resubscribed). */
  subscribed: boolean;
  /** Became unsubscribed (subscribed address unsubscribed, or new address stored unsubscribed). */
  unsubscribed: boolean;
  /** guid, data_* or open tracking consent of an existing address changed. */
  dataChanged: boolean;
}

/** The stored state of a subscriber (without keys). */
export interface SubscriberState {
  email: string;
  guid: string;
  subscribed: boolean;
  subscribedAt?: string;
  unsubscribedAt?: string;
  unsubscribedCause?: UnsubscribeCause;
  data: Record<string, unknown>;
  openTrackingConsent?: boolean;
  createdAt: string;
  updatedAt: string;
  version: number;
  lastOpId?: string;
  lastOutcome?: Outcome;
  /** The last imported file that contained the address (SubscriberLine.importFileId); other writes keep it. */
  lastImportFile?: string;
  /** A record per change of status (consent records), the first one and the latest: at most MAX_CONSENT_RECORDS. */
  consent?: ConsentRecord[];
  /**
   * The guids this address had before in this list, latest first (at most MAX_PREVIOUS_GUIDS): reading
   * history recorded under them is the same person's, so the export shows it and `users/delete` deletes it.
   */
  previousGuids?: string[];
}

/** Replaced guids kept per subscriber and list (docs/api.md, "Changing a guid"). */
export const MAX_PREVIOUS_GUIDS = 5;

/** The replaced guids after `prior`'s guid becomes `guid`: the replaced one first, the new one never listed. */
export function previousGuidsAfter(prior: Pick<SubscriberState, 'guid' | 'previousGuids'> | undefined, guid: string): string[] | undefined {
  if (!prior || prior.guid === guid) return prior?.previousGuids;
  const kept = [prior.guid, ...(prior.previousGuids ?? []).filter((g) => g !== guid && g !== prior.guid)].slice(0, MAX_PREVIOUS_GUIDS);
  return kept;
}

/** Consent records kept per subscriber and list: the first (how the address came in) and the 9 latest changes. */
export const MAX_CONSENT_RECORDS = 10;

/** Deltas of a list's counters. */
export interface CounterDeltas {
  subscribed: number;
  unsubscribed: number;
  HARD_BOUNCE: number;
  PUBLISHER: number;
  READER: number;
}

export const zeroDeltas = (): CounterDeltas => ({ subscribed: 0, unsubscribed: 0, HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 });

export interface Change {
  /** The new state to write, or undefined when nothing needs writing. */
  next?: SubscriberState;
  outcome: Outcome;
  deltas: CounterDeltas;
  events: EventRecord[];
  /** Why the line was not applied (nothing written), for the report's errors. */
  refused?: string;
}

/** Default guid of a subscriber: the md5 of the lower-cased email (spec 2.4, 2.8). */
export function defaultGuid(email: string): string {
  return createHash('md5').update(email.toLowerCase()).digest('hex');
}

/** Adds the counter contribution of a state (+1) or removes it (-1). */
export function countState(deltas: CounterDeltas, state: Pick<SubscriberState, 'subscribed' | 'unsubscribedCause'> | undefined, sign: 1 | -1): void {
  if (!state) return;
  if (state.subscribed) deltas.subscribed += sign;
  else {
    deltas.unsubscribed += sign;
    deltas[state.unsubscribedCause ?? 'READER'] += sign;
  }
}

const noOutcome = (): Outcome => ({ created: false, subscribed: false, unsubscribed: false, dataChanged: false });

/**
 * Applies one line to the prior state of its address.
 * - subscribed true: subscribed. false: unsubscribed with unsubscribed_cause
 *   (default READER); an address already unsubscribed keeps its first cause.
 *   Absent: a new address is subscribed, an existing one keeps its status.
 * - data_* fields are merged; a null value removes that field.
 * - guid: as given, else the existing one, else md5 of the email; a replaced
 *   guid is kept in previousGuids (MAX_PREVIOUS_GUIDS).
 * - A line whose opId equals the stored lastOpId was applied already: nothing
 *   is written and its stored outcome is reported again.
 * - lastImportFile: the line's importFileId when given, else kept.
 */
export function applyLine(prior: SubscriberState | undefined, line: SubscriberLine, now: string, listId: number): Change {
  if (line.opId !== undefined && prior?.lastOpId === line.opId) {
    // Applied already: the same outcome, and the same events (dated when they happened), so a
    // retry whose first attempt could not store its events stores them now.
    const outcome = prior.lastOutcome ?? noOutcome();
    return { outcome, deltas: zeroDeltas(), events: transitionEvents(outcome, prior, listId) };
  }
  const isNew = prior === undefined;
  if (isNew && line.onlyExisting) return { outcome: noOutcome(), deltas: zeroDeltas(), events: [] };
  let subscribed = prior?.subscribed ?? true;
  let cause = prior?.unsubscribedCause;
  if (line.subscribed === true) {
    subscribed = true;
    cause = undefined;
  } else if (line.subscribed === false && (isNew || prior.subscribed)) {
    subscribed = false;
    cause = line.unsubscribedCause ?? 'READER';
  }
  const becameSubscribed = subscribed && !prior?.subscribed;
  const becameUnsubscribed = !subscribed && (isNew || prior.subscribed);

  const data = { ...(prior?.data ?? {}) };
  for (const [name, value] of Object.entries(line.data ?? {})) {
    if (value === null) delete data[name];
    else data[name] = value;
  }
  if (line.data && jsonBytes(data) > MAX_STORED_DATA_BYTES) {
    return { outcome: noOutcome(), deltas: zeroDeltas(), events: [], refused: `data_* fields would exceed ${MAX_STORED_DATA_BYTES} bytes for this subscriber; remove some (null) first` };
  }
  const guid = line.guid ?? prior?.guid ?? defaultGuid(line.email);
  const openTrackingConsent = line.openTrackingConsent ?? prior?.openTrackingConsent;
  const dataChanged =
    !isNew && (guid !== prior.guid || openTrackingConsent !== prior.openTrackingConsent || !isDeepStrictEqual(data, prior.data ?? {}));
  const outcome: Outcome = { created: isNew, subscribed: becameSubscribed, unsubscribed: becameUnsubscribed, dataChanged };

  const deltas = zeroDeltas();
  const changed = isNew || becameSubscribed || becameUnsubscribed || dataChanged;
  const importFile = line.importFileId ?? prior?.lastImportFile;
  if (!changed && line.opId === undefined && importFile === prior?.lastImportFile) return { outcome, deltas, events: [] };

  // The consent record goes into the item that changes: no write can store the change without its record.
  let consent = prior?.consent;
  if (becameSubscribed || becameUnsubscribed) {
    consent = [...(consent ?? []), { at: now, subscribed, cause, ...(line.consent ?? (line.importFileId ? { source: 'import', file_id: line.importFileId } : { source: 'api' })) }];
    if (consent.length > MAX_CONSENT_RECORDS) consent.splice(1, 1);
  }
  const next: SubscriberState = {
    email: line.email,
    guid,
    subscribed,
    subscribedAt: becameSubscribed ? now : prior?.subscribedAt,
    unsubscribedAt: becameUnsubscribed ? now : subscribed ? undefined : prior?.unsubscribedAt,
    unsubscribedCause: subscribed ? undefined : cause,
    data,
    openTrackingConsent,
    createdAt: prior?.createdAt ?? now,
    updatedAt: changed ? now : prior.updatedAt,
    version: (prior?.version ?? 0) + 1,
    lastOpId: line.opId,
    lastOutcome: line.opId === undefined ? undefined : outcome,
    lastImportFile: importFile,
    consent,
    previousGuids: previousGuidsAfter(prior, guid),
  };
  countState(deltas, prior, -1);
  countState(deltas, next, 1);

  return { next, outcome, deltas, events: transitionEvents(outcome, next, listId) };
}

/**
 * The events of a state change: nl_subscribe when the address became
 * subscribed, nl_unsubscribe (with its cause) when a subscribed address
 * became unsubscribed; dated at the change (`updatedAt` of the new state).
 * The guid rides along for the change feed (webhooks, the bus); the CSV
 * files show only their columns.
 */
export function transitionEvents(outcome: Pick<Outcome, 'created' | 'subscribed' | 'unsubscribed'>, state: SubscriberState, listId: number): EventRecord[] {
  const events: EventRecord[] = [];
  if (outcome.subscribed) events.push({ event: 'nl_subscribe', date: state.updatedAt, email: state.email, email_list_id: listId, guid: state.guid });
  if (outcome.unsubscribed && !outcome.created) {
    events.push({ event: 'nl_unsubscribe', date: state.updatedAt, email: state.email, cause: state.unsubscribedCause ?? 'READER', email_list_id: listId, guid: state.guid });
  }
  return events;
}

/**
 * The event of a subscription deleted by `users/delete` (raw-only `nl_delete`, the change
 * `subscriber.deleted`; no CSV column shows it): the identifiers a receiver needs to find and erase
 * the person (address, guid, list) and the deletion's date, nothing else of the subscriber (no
 * status, data_* fields or consent records: data minimisation).
 */
export function deletionEvent(state: Pick<SubscriberState, 'email' | 'guid'>, listId: number, date: string): EventRecord {
  return { event: 'nl_delete', date, email: state.email, email_list_id: listId, guid: state.guid };
}

/** Adds one set of deltas into another. */
export function addDeltas(into: CounterDeltas, more: CounterDeltas): void {
  for (const name of Object.keys(into) as Array<keyof CounterDeltas>) into[name] += more[name];
}

/**
 * Keeps the last line of each address (the last line wins) and counts the
 * duplicates the report shows: a line is a duplicate email when an earlier
 * valid line has the same address, a duplicate guid when an earlier valid
 * line gave the same guid for another address.
 */
export function dedupeLines(lines: SubscriberLine[]): { unique: SubscriberLine[]; duplicateEmails: number; duplicateGuids: number } {
  const byEmail = new Map<string, SubscriberLine>();
  const guidOwner = new Map<string, string>();
  let duplicateEmails = 0;
  let duplicateGuids = 0;
  for (const line of lines) {
    if (byEmail.has(line.email)) duplicateEmails++;
    byEmail.delete(line.email);
    byEmail.set(line.email, line);
    if (line.guid !== undefined) {
      const owner = guidOwner.get(line.guid);
      if (owner === undefined) guidOwner.set(line.guid, line.email);
      else if (owner !== line.email) duplicateGuids++;
    }
  }
  return { unique: [...byEmail.values()], duplicateEmails, duplicateGuids };
}

/** Builds the report (spec 2.6) from validation errors, duplicate counts and outcomes. */
export function buildReport(
  errors: ReportError[],
  uniqueCount: number,
  duplicateEmails: number,
  duplicateGuids: number,
  outcomes: Outcome[],
): Report {
  const count = (key: keyof Outcome) => outcomes.filter((o) => o[key]).length;
  return {
    errors,
    unique_emails_count: uniqueCount,
    duplicate_emails_count: duplicateEmails,
    duplicate_guid_count: duplicateGuids,
    nb_created: count('created'),
    nb_subscribed: count('subscribed'),
    nb_unsubscribed: count('unsubscribed'),
    nb_data_changed: count('dataChanged'),
  };
}
