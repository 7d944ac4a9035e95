import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../shared/http/openapi.js';
import { deletionEvent } from '../../shared/subscribers/rules.js';
import { changesOfRaw, changeSource, changeTypes } from '../../shared/webhooks/changes.js';
import { deliveriesOf, finishedImports } from '../../shared/webhooks/fanout.js';
import { newSecret, sign, signedHeaders } from '../../shared/webhooks/signing.js';
import type { StoredWebhook } from '../../shared/webhooks/store.js';

const key = 'raw/acme/nl_unsubscribe/2026-11-25/10/d-ops-abc.jsonl';
const lines = [
  JSON.stringify({ date: '2026-11-25T10:00:00.000Z', email: 'a@x.co', cause: 'PUBLISHER', email_list_id: 3, guid: 'g-a' }),
  JSON.stringify({ date: '2026-11-25T10:00:01.000Z', email: 'b@x.co', email_list_id: 3 }),
].join('\n');

describe('changes of a raw object', () => {
  it('maps subscription, bounce and complaint objects; ignores the others', () => {
    expect(changeSource(key)).toEqual({ clientId: 'acme', event: 'nl_unsubscribe', type: 'subscriber.unsubscribed' });
    expect(changeSource('raw/acme/nl_bounce/2026-11-25/10/x.jsonl')?.type).toBe('subscriber.bounced');
    expect(changeSource('raw/acme/nl_complaint/2026-11-25/10/x.jsonl')?.type).toBe('subscriber.complained');
    for (const other of ['raw/acme/nl_click/2026-11-25/10/x.jsonl', 'raw/acme/nl_send/2026-11-25/x.jsonl', 'events/acme/nl_subscribe/2026-11-25.csv']) expect(changeSource(other)).toBeUndefined();
  });

  it('reads each line in order with its cause (READER when absent), guid and list; ids stable for the same key and line', () => {
    const changes = changesOfRaw(key, lines + '\n');
    expect(changes.map(({ id: _, ...c }) => c)).toEqual([
      { type: 'subscriber.unsubscribed', time: '2026-11-25T10:00:00.000Z', client_id: 'acme', list_id: 3, email: 'a@x.co', guid: 'g-a', cause: 'PUBLISHER', source: 'subscribers', data: {} },
      { type: 'subscriber.unsubscribed', time: '2026-11-25T10:00:01.000Z', client_id: 'acme', list_id: 3, email: 'b@x.co', guid: null, cause: 'READER', source: 'subscribers', data: {} },
    ]);
    expect(changesOfRaw(key, lines).map((c) => c.id)).toEqual(changes.map((c) => c.id));
    expect(changes[0].id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(changesOfRaw(key.replace('abc', 'abd'), lines)[0].id).not.toBe(changes[0].id);
  });

  it('maps a deletion record (raw-only nl_delete, written by users/delete) to subscriber.deleted: address, guid, list, time; no cause, no data', () => {
    const deletionKey = 'raw/acme/nl_delete/2026-11-25/10/d-w-0f8a.jsonl';
    expect(changeSource(deletionKey)).toEqual({ clientId: 'acme', event: 'nl_delete', type: 'subscriber.deleted' });
    const line = JSON.stringify(deletionEvent({ email: 'gone@x.co', guid: 'g-gone' }, 3, '2026-11-25T10:00:00.000Z')).replace('"event":"nl_delete",', '');
    const [change] = changesOfRaw(deletionKey, line);
    expect(change).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) as string,
      type: 'subscriber.deleted',
      time: '2026-11-25T10:00:00.000Z',
      client_id: 'acme',
      list_id: 3,
      email: 'gone@x.co',
      guid: 'g-gone',
      cause: null,
      source: 'subscribers',
      data: {},
    });
    expect(changesOfRaw(deletionKey, line)[0].id).toBe(change.id);
  });

  it('keeps an SES event’s id across objects (its hidden id), with the bounce fields as data', () => {
    const line = JSON.stringify({ date: '2026-11-25T10:00:00.000Z', email: 'a@x.co', campaign_id: 'c1', type: 'Permanent', message: 'no such user', _id: 'ses-1' });
    const [one] = changesOfRaw('raw/acme/nl_bounce/2026-11-25/10/1.jsonl', line);
    const [two] = changesOfRaw('raw/acme/nl_bounce/2026-11-25/10/2.jsonl', line);
    expect(one.id).toBe(two.id);
    expect(one).toMatchObject({ type: 'subscriber.bounced', source: 'ses', cause: null, list_id: null, data: { campaign_id: 'c1', bounce_type: 'Permanent', message: 'no such user' } });
  });
});

describe('fan-out', () => {
  const hook = (id: string, events: StoredWebhook['events']): StoredWebhook => ({ id, clientId: 'acme', url: 'https://example.com/h', events, secret: 'whsec_x', createdAt: '' });

  it('queues per webhook only its types, in order, 25 events per message', () => {
    const changes = Array.from({ length: 30 }, (_, i) => changesOfRaw(key, JSON.stringify({ date: `2026-11-25T10:00:${String(i).padStart(2, '0')}.000Z`, email: `${i}@x.co` }))[0]);
    const messages = deliveriesOf([hook('wh_a', ['subscriber.unsubscribed']), hook('wh_b', ['subscriber.subscribed'])], changes, 1);
    expect(messages.map((m) => [m.webhookId, m.events.length, m.attempt])).toEqual([['wh_a', 25, 0], ['wh_a', 5, 0]]);
    expect(messages.flatMap((m) => m.events.map((e) => e.email))).toEqual(changes.map((c) => c.email));
  });

  it('takes the files an import run ended from its success record', () => {
    const record = (responsePayload: unknown, condition = 'Success') => ({ requestContext: { condition }, responsePayload }) as Parameters<typeof finishedImports>[0];
    expect(finishedImports(record([{ key: 'uploads/acme/7/source', outcome: 'done' }, { key: 'uploads/acme/8/source', outcome: 'paused' }, { key: 'uploads/acme/9/resume-2', outcome: 'failed' }]))).toEqual([
      { clientId: 'acme', fileId: 7 },
      { clientId: 'acme', fileId: 9 },
    ]);
    expect(finishedImports(record([{ key: 'uploads/acme/7/source', failed: true }]))).toEqual([{ clientId: 'acme', fileId: 7 }]);
    expect(finishedImports(record([{ key: 'uploads/acme/7/source', outcome: 'done' }], 'RetriesExhausted'))).toEqual([]);
    expect(finishedImports(record(null))).toEqual([]);
  });
});

describe('signing (Standard Webhooks)', () => {
  it('signs so that the reference implementation verifies; a changed id, timestamp or body does not', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"id":"evt_1"}';
    const headers = signedHeaders(secret, 'evt_1', body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ id: 'evt_1' });
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_2' })).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('1', '2'), headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) })).toThrow();
  });

  it('matches the specification’s example signature', () => {
    // From the Standard Webhooks specification's test vectors (standard-webhooks/libraries).
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('the OpenAPI document', () => {
  it('describes the delivery (OpenAPI 3.1 webhooks): signature headers and the change event schema', () => {
    const post = (openApiDocument('http://127.0.0.1:1').webhooks as unknown as Record<string, { post: { parameters: Array<{ name: string }>; requestBody: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }>; required: string[] } }> } } }>).subscriberChange.post;
    expect(post.parameters.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const schema = post.requestBody.content['application/json'].schema;
    expect(schema.required.sort()).toEqual(['cause', 'client_id', 'data', 'email', 'guid', 'id', 'list_id', 'source', 'time', 'type']);
    expect(schema.properties.type.enum).toEqual([...changeTypes]);
    expect((schema.properties.type as { description?: string }).description).toContain('subscriber.deleted: the subscription was erased by POST /v1/users/delete');
  });
});
