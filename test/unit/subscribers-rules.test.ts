import { describe, expect, it } from 'vitest';
import { parseSubscriberLine } from '../../shared/subscribers/parse.js';
import { applyLine, buildReport, dedupeLines, defaultGuid, MAX_PREVIOUS_GUIDS, type SubscriberState } from '../../shared/subscribers/rules.js';
import type { SubscriberLine } from '../../shared/subscribers/types.js';

const NOW = '2026-11-22T10:00:00.000Z';
const line = (fields: Partial<SubscriberLine> & { email: string }): SubscriberLine => ({ line: 1, ...fields });
const existing = (fields: Partial<SubscriberState> = {}): SubscriberState => ({
  email: 'a@x.co',
  guid: 'g1',
  subscribed: true,
  subscribedAt: '2026-01-01T00:00:00.000Z',
  data: { data_name: 'Ann' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  version: 3,
  ...fields,
});

describe('applyLine', () => {
  it('creates a new address as subscribed when subscribed is absent, with the md5 guid and subscribed_at', () => {
    const change = applyLine(undefined, line({ email: 'a@x.co' }), NOW, 7);
    expect(change.outcome).toEqual({ created: true, subscribed: true, unsubscribed: false, dataChanged: false });
    expect(change.next).toMatchObject({ subscribed: true, subscribedAt: NOW, guid: defaultGuid('a@x.co'), version: 1 });
    expect(change.deltas).toMatchObject({ subscribed: 1, unsubscribed: 0 });
    expect(change.events).toEqual([{ event: 'nl_subscribe', date: NOW, email: 'a@x.co', email_list_id: 7, guid: defaultGuid('a@x.co') }]);
  });

  it(`keeps the replaced guids, latest first, at most ${MAX_PREVIOUS_GUIDS}, never the current one`, () => {
    let state = existing({ guid: 'g0' });
    for (let i = 1; i <= MAX_PREVIOUS_GUIDS + 2; i++) state = applyLine(state, line({ email: 'a@x.co', guid: `g${i}` }), NOW, 7).next!;
    expect(state.guid).toBe(`g${MAX_PREVIOUS_GUIDS + 2}`);
    expect(state.previousGuids).toEqual(Array.from({ length: MAX_PREVIOUS_GUIDS }, (_, i) => `g${MAX_PREVIOUS_GUIDS + 1 - i}`));
    const back = applyLine(state, line({ email: 'a@x.co', guid: 'g3' }), NOW, 7).next!;
    expect(back.previousGuids).toEqual([`g${MAX_PREVIOUS_GUIDS + 2}`, ...state.previousGuids!.filter((g) => g !== 'g3')]);
    // A line without a guid, or with the same one, keeps them as they are.
    expect(applyLine(back, line({ email: 'a@x.co', data: { data_x: '1' } }), NOW, 7).next!.previousGuids).toEqual(back.previousGuids);
    expect(applyLine(undefined, line({ email: 'b@x.co', guid: 'z' }), NOW, 7).next!.previousGuids).toBeUndefined();
  });

  it('keeps the status of an existing address when subscribed is absent', () => {
    const change = applyLine(existing({ subscribed: false, unsubscribedCause: 'PUBLISHER' }), line({ email: 'a@x.co' }), NOW, 7);
    expect(change.next).toBeUndefined();
    expect(change.outcome).toEqual({ created: false, subscribed: false, unsubscribed: false, dataChanged: false });
  });

  it('unsubscribes with the given cause (default READER) and moves the counters', () => {
    const change = applyLine(existing(), line({ email: 'a@x.co', subscribed: false, unsubscribedCause: 'PUBLISHER' }), NOW, 7);
    expect(change.next).toMatchObject({ subscribed: false, unsubscribedCause: 'PUBLISHER', unsubscribedAt: NOW, subscribedAt: '2026-01-01T00:00:00.000Z' });
    expect(change.deltas).toEqual({ subscribed: -1, unsubscribed: 1, HARD_BOUNCE: 0, PUBLISHER: 1, READER: 0 });
    expect(change.events).toEqual([{ event: 'nl_unsubscribe', date: NOW, email: 'a@x.co', cause: 'PUBLISHER', email_list_id: 7, guid: 'g1' }]);
    expect(applyLine(existing(), line({ email: 'a@x.co', subscribed: false }), NOW, 7).next?.unsubscribedCause).toBe('READER');
  });

  it('keeps the first cause of an address already unsubscribed', () => {
    const change = applyLine(existing({ subscribed: false, unsubscribedCause: 'READER' }), line({ email: 'a@x.co', subscribed: false, unsubscribedCause: 'HARD_BOUNCE' }), NOW, 7);
    expect(change.next).toBeUndefined();
    expect(change.deltas).toMatchObject({ READER: 0, HARD_BOUNCE: 0 });
  });

  it('stores a new address given as unsubscribed without an nl_unsubscribe event', () => {
    const change = applyLine(undefined, line({ email: 'a@x.co', subscribed: false }), NOW, 7);
    expect(change.outcome).toEqual({ created: true, subscribed: false, unsubscribed: true, dataChanged: false });
    expect(change.next?.subscribedAt).toBeUndefined();
    expect(change.events).toEqual([]);
  });

  it('merges data_* fields, removes a field given as null, and counts a data change', () => {
    const change = applyLine(existing(), line({ email: 'a@x.co', data: { data_city: 'Oslo', data_name: null } }), NOW, 7);
    expect(change.next?.data).toEqual({ data_city: 'Oslo' });
    expect(change.outcome.dataChanged).toBe(true);
    expect(change.deltas).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('counts guid and consent changes as data changes, and identical values as none', () => {
    expect(applyLine(existing(), line({ email: 'a@x.co', guid: 'g2' }), NOW, 7).outcome.dataChanged).toBe(true);
    expect(applyLine(existing(), line({ email: 'a@x.co', openTrackingConsent: false }), NOW, 7).outcome.dataChanged).toBe(true);
    expect(applyLine(existing(), line({ email: 'a@x.co', guid: 'g1', data: { data_name: 'Ann' } }), NOW, 7).next).toBeUndefined();
  });

  it('does not apply a line twice under the same opId and reports its first outcome and events again', () => {
    const first = applyLine(undefined, line({ email: 'a@x.co', opId: 'import#1#5' }), NOW, 7);
    const again = applyLine(first.next, line({ email: 'a@x.co', opId: 'import#1#5' }), '2026-11-22T11:00:00.000Z', 7);
    expect(again.next).toBeUndefined();
    expect(again.deltas).toMatchObject({ subscribed: 0 });
    expect(again.outcome).toEqual(first.outcome);
    expect(again.events).toEqual(first.events);
    expect(again.events).toEqual([{ event: 'nl_subscribe', date: NOW, email: 'a@x.co', email_list_id: 7, guid: defaultGuid('a@x.co') }]);

    const unsubscribed = applyLine(existing(), line({ email: 'a@x.co', subscribed: false, unsubscribedCause: 'PUBLISHER', opId: 'import#2#1' }), NOW, 7);
    const replayed = applyLine(unsubscribed.next, line({ email: 'a@x.co', subscribed: false, unsubscribedCause: 'PUBLISHER', opId: 'import#2#1' }), '2026-11-23T00:00:00.000Z', 7);
    expect(replayed.events).toEqual([{ event: 'nl_unsubscribe', date: NOW, email: 'a@x.co', cause: 'PUBLISHER', email_list_id: 7, guid: 'g1' }]);
  });

  it('stores lastImportFile only from lines that give importFileId, and keeps it across other writes', () => {
    const imported = applyLine(existing(), line({ email: 'a@x.co', opId: 'import#3#2', importFileId: '3' }), NOW, 7).next!;
    expect(imported.lastImportFile).toBe('3');
    // An API update, confirmation or bounce afterwards: lastOpId changes, lastImportFile stays.
    const updated = applyLine(imported, line({ email: 'a@x.co', subscribed: false, unsubscribedCause: 'HARD_BOUNCE' }), NOW, 7).next!;
    expect(updated).toMatchObject({ lastOpId: undefined, lastImportFile: '3', subscribed: false });
    expect(applyLine(updated, line({ email: 'a@x.co', data: { data_x: 1 }, opId: 'api#9' }), NOW, 7).next?.lastImportFile).toBe('3');
    // A later file replaces it, even when it changes nothing else.
    const unchanged = applyLine(updated, line({ email: 'a@x.co', importFileId: '4' }), NOW, 7);
    expect(unchanged.outcome).toEqual({ created: false, subscribed: false, unsubscribed: false, dataChanged: false });
    expect(unchanged.next?.lastImportFile).toBe('4');
    // The same file again, nothing else changed and no opId: nothing to write.
    expect(applyLine(unchanged.next, line({ email: 'a@x.co', importFileId: '4' }), NOW, 7).next).toBeUndefined();
    // A replayed line (same opId) writes nothing: the stored lastImportFile is already that file's.
    const replay = applyLine(imported, line({ email: 'a@x.co', opId: 'import#3#2', importFileId: '3' }), NOW, 7);
    expect(replay.next).toBeUndefined();
    expect(imported.lastImportFile).toBe('3');
    expect(applyLine(undefined, line({ email: 'b@x.co' }), NOW, 7).next?.lastImportFile).toBeUndefined();
  });
});

describe('dedupeLines and buildReport', () => {
  it('keeps the last line of an address and counts duplicate emails and guids', () => {
    const lines = [
      line({ email: 'a@x.co', guid: 'g', data: { data_v: 1 } }),
      line({ email: 'b@x.co', guid: 'g' }),
      line({ email: 'a@x.co', data: { data_v: 2 } }),
      line({ email: 'a@x.co', guid: 'g' }),
    ];
    const { unique, duplicateEmails, duplicateGuids } = dedupeLines(lines);
    expect(unique.map((l) => [l.email, l.guid])).toEqual([
      ['b@x.co', 'g'],
      ['a@x.co', 'g'],
    ]);
    expect(duplicateEmails).toBe(2);
    expect(duplicateGuids).toBe(1);
  });

  it('counts each outcome flag', () => {
    const report = buildReport([{ line: 9, email: 'x', cause: 'email is missing or invalid' }], 3, 1, 0, [
      { created: true, subscribed: true, unsubscribed: false, dataChanged: false },
      { created: false, subscribed: false, unsubscribed: true, dataChanged: true },
      { created: false, subscribed: false, unsubscribed: false, dataChanged: false },
    ]);
    expect(report).toEqual({
      errors: [{ line: 9, email: 'x', cause: 'email is missing or invalid' }],
      unique_emails_count: 3,
      duplicate_emails_count: 1,
      duplicate_guid_count: 0,
      nb_created: 1,
      nb_subscribed: 1,
      nb_unsubscribed: 1,
      nb_data_changed: 1,
    });
  });
});

describe('parseSubscriberLine', () => {
  it('normalises the email and reads booleans in their string forms', () => {
    expect(parseSubscriberLine({ email: '  Ann@Example.COM ', subscribed: 'FALSE', unsubscribed_cause: 'publisher', open_tracking_consent: 'True' }, 4)).toEqual({
      line: 4,
      email: 'ann@example.com',
      subscribed: false,
      guid: undefined,
      unsubscribedCause: 'PUBLISHER',
      data: undefined,
      openTrackingConsent: true,
    });
  });

  it('leaves consent unchanged for any other value and keeps data_* fields', () => {
    const parsed = parseSubscriberLine({ email: 'a@x.co', open_tracking_consent: 'maybe', data_first_name: 'Al', other: 1 }, 1);
    expect(parsed).toMatchObject({ openTrackingConsent: undefined, data: { data_first_name: 'Al' } });
  });

  it.each([
    [{}, 'email is missing or invalid'],
    [{ email: 'a b@x.co' }, 'email is missing or invalid'],
    [{ email: 'ü@x.co' }, 'email is missing or invalid'],
    [{ email: `${'a'.repeat(290)}@x.co` }, 'email is missing or invalid'],
    [{ email: 42 }, 'email is missing or invalid'],
    [{ email: 'a@x.co', subscribed: 'yes' }, 'subscribed must be true or false'],
    [{ email: 'a@x.co', unsubscribed_cause: 'BOUNCE' }, 'unsubscribed_cause must be READER or PUBLISHER'],
    [{ email: 'a@x.co', guid: '' }, 'guid must not be empty'],
    [{ email: 'a@x.co', data_big: 'x'.repeat(11_000) }, 'data_* fields are larger than 10240 bytes'],
    ['a@x.co', 'a subscriber must be a JSON object'],
  ])('reports %j as %s', (raw, cause) => {
    expect(parseSubscriberLine(raw, 3)).toMatchObject({ line: 3, cause });
  });

  it('echoes at most 254 characters of an invalid email, so reports stay small', () => {
    const parsed = parseSubscriberLine({ email: 'x'.repeat(250_000) }, 1);
    expect(parsed).toEqual({ line: 1, email: `${'x'.repeat(254)}…`, cause: 'email is missing or invalid' });
  });

  it('treats an invalid subscribed as absent for CSV lines', () => {
    expect(parseSubscriberLine({ email: 'a@x.co', subscribed: 'yes' }, 1, { lenientSubscribed: true })).toMatchObject({ subscribed: undefined });
  });
});
