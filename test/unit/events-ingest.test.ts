import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventRecord } from '../../shared/events/types.js';
import { sesFixture, sqsEvent } from '../fixtures/ses/fixtures.js';

// The ingester's batching and failure rules, with its AWS-facing parts replaced.
const writes: Array<{ clientId: string; records: EventRecord[] }> = [];
let failWrites = new Set<string>();
vi.mock('../../shared/events/record.js', () => ({
  recordEvents: vi.fn((clientId: string, records: EventRecord[]) => {
    if (failWrites.has(clientId)) return Promise.reject(new Error('S3 down'));
    writes.push({ clientId, records });
    return Promise.resolve();
  }),
}));
vi.mock('../../shared/clients/clients.js', () => ({ getClient: vi.fn((id: string) => Promise.resolve(id === 'ghost' ? undefined : { id })) }));
vi.mock('../../shared/subscribers/store.js', () => ({
  listsOfEmail: vi.fn((_c: string, email: string) => {
    if (email === 'broken@x.io') return Promise.reject(new Error('DynamoDB throttled'));
    return Promise.resolve([1]);
  }),
}));
vi.mock('../../shared/subscribers/index.js', () => ({
  getSubscriber: vi.fn(() => Promise.resolve({ subscribed: true })),
  applySubscribers: vi.fn(() => Promise.resolve({ nb_unsubscribed: 1 })),
}));

const { ingestSesEvents } = await import('../../shared/events/ingest.js');

function bounce(client: string, email: string) {
  const n = sesFixture('bounce-permanent', { client });
  n.bounce!.bouncedRecipients[0].emailAddress = email;
  return n;
}

beforeEach(() => {
  writes.length = 0;
  failWrites = new Set();
});

describe('ingestSesEvents (SQS batches)', () => {
  it('writes the records of a whole batch in one call per client, each line with the hidden id of its notification', async () => {
    const event = sqsEvent([sesFixture('send', { client: 'acme' }), sesFixture('open', { client: 'acme' }), sesFixture('send', { client: 'beta' })], {
      messageIds: ['s1', 's2', 's3'],
    });
    expect(await ingestSesEvents(event)).toMatchObject({ notifications: 3, events: 3, batchItemFailures: [] });
    expect(writes.map((w) => [w.clientId, w.records.map((r) => `${r.event}/${r._id}`)])).toEqual([
      ['acme', ['nl_send/s1:0', 'nl_display/s2:0']],
      ['beta', ['nl_send/s3:0']],
    ]);
  });

  it('reports only the failed messages (partial batch response): a failed write fails its client, a failed unsubscription its message', async () => {
    failWrites.add('beta');
    const event = sqsEvent([bounce('acme', 'ok@x.io'), bounce('acme', 'broken@x.io'), sesFixture('send', { client: 'beta' }), sesFixture('send', { client: 'ghost' })]);
    const summary = await ingestSesEvents(event);
    const ids = event.Records.map((r) => r.messageId);
    expect(summary.batchItemFailures).toEqual([{ itemIdentifier: ids[1] }, { itemIdentifier: ids[2] }]);
    expect(summary).toMatchObject({ unsubscribed: 1, ignored: ['unknown client ghost'] });
    expect(writes.map((w) => w.clientId)).toEqual(['acme']);
  });

  it('outside SQS (SNS or a local run) a fault propagates, so the caller retries', async () => {
    failWrites.add('acme');
    await expect(ingestSesEvents(sesFixture('send', { client: 'acme' }))).rejects.toThrow('S3 down');
  });
});
