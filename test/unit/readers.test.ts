/** Pure parts of reader links and consent records: the token construction, rotation, the form bodies, the bounded consent records. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { formFields } from '../../shared/http/form-body.js';
import { decodeAddress, linkToken, linkUrl, verifyLinkToken, type LinkTarget } from '../../shared/readers/links.js';
import { consentRecords } from '../../shared/readers/consent.js';
import { maskAddress, preferencesPage, unsubscribePage } from '../../shared/readers/pages.js';
import { applyLine, MAX_CONSENT_RECORDS, type SubscriberState } from '../../shared/subscribers/rules.js';

const target: LinkTarget = { kind: 'unsubscribe', clientId: 'acme', listId: 3, email: 'ann@example.com' };

describe('reader link tokens', () => {
  it('are base64url HMAC-SHA256 of the documented message, and the URL carries the address as base64url', () => {
    const expected = createHmac('sha256', 's3cret').update('unsubscribe\nacme\n3\nann@example.com').digest('base64url');
    expect(linkToken('s3cret', target)).toBe(expected);
    expect(linkUrl('https://x.example', { current: 's3cret' }, target)).toBe(`https://x.example/v1/readers/unsubscribe/acme/3/${Buffer.from('ann@example.com').toString('base64url')}/${expected}`);
    const prefs = createHmac('sha256', 's3cret').update('preferences\nacme\nann@example.com').digest('base64url');
    expect(linkToken('s3cret', { kind: 'preferences', clientId: 'acme', email: 'ann@example.com' })).toBe(prefs);
  });

  it('verify only for their own client, list and address, and for the previous secret only within its grace period', () => {
    const token = linkToken('old', target);
    expect(verifyLinkToken({ current: 'old' }, target, token)).toBe(true);
    for (const other of [{ ...target, listId: 4 }, { ...target, email: 'bob@example.com' }, { ...target, clientId: 'acme2' }]) expect(verifyLinkToken({ current: 'old' }, other, token)).toBe(false);
    expect(verifyLinkToken({ current: 'old' }, { kind: 'preferences', clientId: 'acme', email: 'ann@example.com' }, token)).toBe(false);
    const now = Date.now();
    expect(verifyLinkToken({ current: 'new', previous: 'old', previousUntil: now + 1000 }, target, token, now)).toBe(true);
    expect(verifyLinkToken({ current: 'new', previous: 'old', previousUntil: now - 1 }, target, token, now)).toBe(false);
    expect(verifyLinkToken({ current: 'old' }, target, token.slice(1))).toBe(false);
    expect(verifyLinkToken({ current: 'old' }, target, '')).toBe(false);
  });

  it('decode only base64url of an address in its one spelling', () => {
    expect(decodeAddress(Buffer.from('a@b.co').toString('base64url'))).toBe('a@b.co');
    expect(decodeAddress(Buffer.from('no-at-sign').toString('base64url'))).toBeUndefined();
    expect(decodeAddress('%%%')).toBeUndefined();
    expect(decodeAddress(`${Buffer.from('a@b.co').toString('base64url')}=`)).toBeUndefined();
  });
});

describe('form bodies of the reader pages', () => {
  it('reads urlencoded and multipart bodies, repeated fields included; refuses other types and oversized bodies', () => {
    const url = formFields({ body: 'List-Unsubscribe=One-Click&list=1&list=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(url?.get('List-Unsubscribe')).toEqual(['One-Click']);
    expect(url?.get('list')).toEqual(['1', '2']);
    const multipart = '--XyZ\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--XyZ--\r\n';
    const parsed = formFields({ body: Buffer.from(multipart).toString('base64'), isBase64Encoded: true, headers: { 'content-type': 'multipart/form-data; boundary=XyZ' } });
    expect(parsed?.get('List-Unsubscribe')).toEqual(['One-Click']);
    expect(formFields({ body: '{}', headers: { 'content-type': 'application/json' } })).toBeUndefined();
    expect(formFields({ body: 'a'.repeat(20_000), headers: { 'content-type': 'application/x-www-form-urlencoded' } })).toBeUndefined();
    expect(formFields({ body: multipart, headers: { 'content-type': 'multipart/form-data' } })).toBeUndefined();
  });
});

describe('reader pages', () => {
  it('escape what they show and mask the address', () => {
    expect(maskAddress('ann@example.com')).toBe('a***@example.com');
    const html = unsubscribePage({ state: 'subscribed', listName: '<img src=x onerror=alert(1)>', email: 'ann@example.com', preferencesUrl: 'https://x.example/p?a="b"', publisher: { name: 'acme' } });
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('href="https://x.example/p?a=&quot;b&quot;"');
    const prefs = preferencesPage({ email: 'ann@example.com', lists: [{ id: 1, name: '</label><script>x</script>', subscribed: true }], publisher: { name: 'acme' } });
    expect(prefs).not.toContain('<script>');
    expect(prefs).toMatch(/<label><input type="checkbox" name="list" value="1" checked> &lt;\/label&gt;/);
  });
});

describe('consent records', () => {
  const NOW = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();

  it('one per change of status, with its source, none for a change of data; bounded to the first and the latest', () => {
    let state: SubscriberState | undefined;
    const apply = (subscribed: boolean | undefined, i: number, extra = {}) => {
      const change = applyLine(state, { line: 1, email: 'a@x.co', subscribed, ...extra }, NOW(i), 1);
      state = change.next ?? state;
      return change;
    };
    apply(true, 0, { importFileId: '7' });
    expect(consentRecords(state!)).toEqual([{ at: NOW(0), subscribed: true, cause: undefined, source: 'import', file_id: '7' }]);
    apply(undefined, 1, { data: { data_x: 1 } });
    expect(consentRecords(state!)).toHaveLength(1);
    apply(false, 2, { consent: { source: 'unsubscribe_link', ip: '192.0.2.1', user_agent: 'UA' } });
    expect(consentRecords(state!)[1]).toEqual({ at: NOW(2), subscribed: false, cause: 'READER', source: 'unsubscribe_link', ip: '192.0.2.1', user_agent: 'UA' });
    apply(false, 3);
    expect(consentRecords(state!)).toHaveLength(2);
    for (let i = 4; i < 30; i++) apply(i % 2 === 0, i);
    expect(consentRecords(state!)).toHaveLength(MAX_CONSENT_RECORDS);
    expect(consentRecords(state!)[0]).toMatchObject({ at: NOW(0), source: 'import' });
    expect(consentRecords(state!).at(-1)).toMatchObject({ at: NOW(29), subscribed: false, source: 'api' });
    expect(consentRecords(state!).slice(1).map((c) => c.at)).toEqual(Array.from({ length: MAX_CONSENT_RECORDS - 1 }, (_, i) => NOW(21 + i)));
  });

  it('an onlyExisting line leaves an unknown address unknown', () => {
    const change = applyLine(undefined, { line: 1, email: 'a@x.co', subscribed: false, onlyExisting: true }, NOW(0), 1);
    expect(change.next).toBeUndefined();
    expect(change.events).toEqual([]);
  });
});
