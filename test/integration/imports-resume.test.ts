import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { config } from '../../shared/config.js';
import { claimFile, emptyProgress, saveProgress } from '../../shared/imports/files.js';
import { runImport } from '../../shared/imports/worker.js';
import { jobList } from '../../shared/jobs.js';
import { s3 } from '../../shared/s3.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { countSubscribers } from '../helpers/subscribers.js';
import type { SubscriberLine } from '../../shared/subscribers/types.js';
import { newClient, request, useService, type TestClient, type ApiBody } from '../helpers/service.js';
import { crashAtCheckpoint, csvRoute, eventLines, s3Event, snapshot, useLoopbackImports } from './imports-helpers.js';

const service = useService();
const CHUNK = 100;
const DATA_LINES = 1200;

/** A file with duplicates, every kind of value, invalid addresses and blank lines. */
const inFile = new Set<string>();
function bigCsv(): string {
  const rows = ['email;subscribed;unsubscribed_cause;guid;data_n;open_tracking_consent'];
  for (let i = 0; i < DATA_LINES; i++) {
    if (i % 50 === 49) {
      rows.push('');
      continue;
    }
    const email = i % 97 === 5 ? `bad-email-${i}` : `u${i % 1000}@ex.com`;
    const subscribed = ['true', 'false', '', 'maybe'][i % 4];
    const cause = i % 8 === 1 ? 'PUBLISHER' : '';
    const guid = i % 5 === 0 ? `g${i}` : '';
    const data = i % 3 === 0 ? `v${i}` : '';
    const consent = ['', 'true', 'FALSE', 'x'][(i >> 2) % 4];
    rows.push([email, subscribed, cause, guid, data, consent].join(';'));
    inFile.add(email);
  }
  return rows.join('\n') + '\n';
}

/** Members before the import: some in the file (both statuses), some absent (update_list unsubscribes them). */
const seed: SubscriberLine[] = [
  ...Array.from({ length: 120 }, (_, i) => ({ line: i + 1, email: `u${i * 7}@ex.com`, subscribed: i % 3 !== 0 })),
  ...Array.from({ length: 60 }, (_, i) => ({ line: 200 + i, email: `absent${i}@ex.com`, subscribed: i % 4 !== 0 })),
];

const loopback = useLoopbackImports();
beforeAll(() => {
  loopback.server.routes.set('/big.csv', csvRoute(bigCsv()));
});

async function prepare(): Promise<{ client: TestClient; fileId: number }> {
  const client = await newClient(service);
  await applySubscribers(client.username, client.defaultListId, seed);
  const reply = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, {
    method: 'POST',
    token: client.token,
    body: { email_list_id: client.defaultListId, url: `${loopback.server.url}/big.csv`, update_list: true },
  });
  expect(reply.status, reply.text).toBe(201);
  return { client, fileId: reply.body.id };
}

/** Everything an import leaves behind: the list, its counts, the file's report, the events. */
async function outcome(client: TestClient, fileId: number) {
  const file = (await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${fileId}`, { token: client.token })).body;
  return {
    subscribers: (await snapshot(client.username, client.defaultListId)).sort((a, b) => String(a.email).localeCompare(String(b.email))),
    counts: await countSubscribers(client.username, client.defaultListId),
    status: file.status,
    progress: file.progress,
    errors: file.errors,
    subscribeEvents: (await eventLines(client.username, 'nl_subscribe')).length,
    unsubscribeEvents: (await eventLines(client.username, 'nl_unsubscribe')).length,
  };
}

let uninterrupted: Awaited<ReturnType<typeof outcome>>;

describe('resumable imports: the same final state, counts, report and events as an uninterrupted run', () => {
  beforeAll(async () => {
    const { client, fileId } = await prepare();
    expect(await runImport(client.username, fileId, { chunkLines: CHUNK })).toBe('done');
    uninterrupted = await outcome(client, fileId);
  }, 120_000);

  it('the uninterrupted run itself did real work (so the comparisons below mean something)', () => {
    expect(uninterrupted.status).toBe('done');
    expect(uninterrupted.progress.lines_read).toBe(DATA_LINES - DATA_LINES / 50);
    expect(uninterrupted.progress.errors).toBeGreaterThan(5);
    expect(uninterrupted.progress.created).toBeGreaterThan(500);
    expect(uninterrupted.progress.unsubscribed).toBeGreaterThan(100);
    expect(uninterrupted.progress.data_changed).toBeGreaterThan(50);
    const absentSubscribed = seed.filter((m) => m.subscribed && !inFile.has(m.email));
    expect(absentSubscribed.length).toBeGreaterThan(40);
    expect(uninterrupted.progress.unsubscribed_absent).toBe(absentSubscribed.length);
    expect(uninterrupted.errors[0]).toEqual({ line: 7, email: 'bad-email-5', cause: expect.any(String) as string });
    expect(uninterrupted.counts.subscribed + uninterrupted.counts.unsubscribed).toBe(uninterrupted.subscribers.length);
  });

  it('a worker that crashes after 3 chunks (applied, not checkpointed) is resumed by the next invocation', async () => {
    const { client, fileId } = await prepare();
    const crash = crashAtCheckpoint(3, 'injected crash after 3 chunks');
    await expect(runImport(client.username, fileId, { chunkLines: CHUNK })).rejects.toThrow('injected crash');
    crash.mockRestore();
    const midway = (await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${fileId}`, { token: client.token })).body;
    expect(midway.status).toBe('processing');
    expect(midway.progress.lines_read).toBeLessThan(uninterrupted.progress.lines_read);
    expect(await runImport(client.username, fileId, { chunkLines: CHUNK })).toBe('done');
    expect(await outcome(client, fileId)).toEqual(uninterrupted);
  });

  it('a worker that crashes in the update_list sweep is resumed without counting anyone twice', async () => {
    const { client, fileId } = await prepare();
    const lineChunks = Math.ceil(DATA_LINES / CHUNK);
    // One checkpoint per line chunk, one as the sweep starts, then the first sweep page's (its lines applied): that one fails.
    const crash = crashAtCheckpoint(lineChunks + 2, 'injected crash in the sweep');
    await expect(runImport(client.username, fileId, { chunkLines: CHUNK })).rejects.toThrow('injected crash');
    crash.mockRestore();
    const midway = (await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${fileId}`, { token: client.token })).body;
    expect(midway.progress).toMatchObject({ lines_read: uninterrupted.progress.lines_read, unsubscribed_absent: 0 });
    expect(await runImport(client.username, fileId, { chunkLines: CHUNK })).toBe('done');
    expect(await outcome(client, fileId)).toEqual(uninterrupted);
  });

  it('a worker short of Lambda time pauses at a checkpoint, leaves a resume marker, and its S3 event finishes the import', async () => {
    const { client, fileId } = await prepare();
    let calls = 0;
    const remainingMs = () => (++calls <= 5 ? 600_000 : 1_000);
    expect(await runImport(client.username, fileId, { chunkLines: CHUNK, remainingMs })).toBe('paused');
    const paused = (await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${fileId}`, { token: client.token })).body;
    expect(paused.status).toBe('processing');
    expect(paused.progress.lines_read).toBe(5 * (CHUNK - 2)); // 5 chunks of 100 lines, 2 blank lines each
    const markers = await s3.send(new ListObjectsV2Command({ Bucket: config.importsBucket, Prefix: `uploads/${client.username}/${fileId}/resume-` }));
    expect(markers.Contents).toHaveLength(1);
    const worker = jobList.find((j) => j.id === 'importsWorker')!;
    const results = (await invokeJob(worker, s3Event(markers.Contents![0].Key!))) as Array<{ outcome: string }>;
    expect(results.map((r) => r.outcome)).toEqual(['done']);
    expect(await outcome(client, fileId)).toEqual(uninterrupted);
  });
});

describe('the lease on a file (duplicate S3 events, dead workers)', () => {
  it('a second invocation leaves a file to the live worker that keeps renewing its lease', async () => {
    const { client, fileId } = await prepare();
    const live = { clientId: client.username, id: fileId };
    expect(await claimFile(client.username, fileId, 'live-worker', Date.now() + 1000)).toBeDefined();
    const renew = setInterval(() => void saveProgress(live, 'live-worker', emptyProgress(), { leaseUntil: Date.now() + 1000 }), 200);
    try {
      expect(await runImport(client.username, fileId, { chunkLines: CHUNK })).toBe('busy');
    } finally {
      clearInterval(renew);
    }
    expect((await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${fileId}`, { token: client.token })).body.progress.lines_read).toBe(0);
  });

  it('takes over a file whose worker died (its lease ran out without renewal) and completes it', async () => {
    const { client, fileId } = await prepare();
    expect(await claimFile(client.username, fileId, 'dead-worker', Date.now() + 1000)).toBeDefined();
    expect(await runImport(client.username, fileId, { chunkLines: CHUNK })).toBe('done');
    expect(await outcome(client, fileId)).toEqual(uninterrupted);
  });
});
