import { describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { MAX_ROW_BYTES } from '../../shared/imports/csv.js';
import { claimFile, MAX_REPORTED_ERRORS_BYTES, readFile } from '../../shared/imports/files.js';
import { sourceKey } from '../../shared/imports/objects.js';
import { MAX_STALLED_INVOCATIONS, runImport } from '../../shared/imports/worker.js';
import { jobList } from '../../shared/jobs.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type TestClient, type ApiBody } from '../helpers/service.js';
import { crashAtCheckpoint, csvRoute, runWorker, s3Event, useLoopbackImports } from './imports-helpers.js';

const service = useService();

const loopback = useLoopbackImports();

/** Posts an import of `csv`; returns the client and the file id (status uploaded). */
async function upload(csv: string, { updateList = false, client }: { updateList?: boolean; client?: TestClient } = {}): Promise<{ client: TestClient; fileId: number }> {
  client ??= await newClient(service);
  const path = `/f-${Math.random().toString(36).slice(2)}.csv`;
  loopback.server.routes.set(path, csvRoute(csv));
  const reply = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, { method: 'POST', token: client.token, body: { email_list_id: client.defaultListId, url: `${loopback.server.url}${path}`, update_list: updateList } });
  expect(reply.status, reply.text).toBe(201);
  return { client, fileId: reply.body.id };
}

const getFile = async (client: TestClient, id: number) => (await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${id}`, { token: client.token })).body;

describe('an import never stays processing', () => {
  it('rejected lines with huge cells: the file ends done, its stored errors clipped and bounded', async () => {
    const huge = (i: number) => `"bad-${i}-${'x'.repeat(60_000)}"`;
    const csv = ['email', 'ok1@x.com', ...Array.from({ length: 40 }, (_, i) => huge(i)), 'ok2@x.com'].join('\n') + '\n';
    const { client, fileId } = await upload(csv);
    expect((await runWorker(client.username, fileId)).map((r) => r.outcome)).toEqual(['done']);
    const file = await getFile(client, fileId);
    expect(file).toMatchObject({ status: 'done', failure_cause: null, progress: { lines_read: 42, created: 2, errors: 40 } });
    expect(file.errors.length).toBeGreaterThan(0);
    expect(file.errors[0]).toMatchObject({ line: 3, email: `bad-0-${'x'.repeat(248)}…` });
    for (const error of file.errors) {
      expect(error.email!.length).toBeLessThanOrEqual(255);
      expect(error.cause.length).toBeLessThanOrEqual(301);
    }
    expect(Buffer.byteLength(JSON.stringify(file.errors))).toBeLessThanOrEqual(MAX_REPORTED_ERRORS_BYTES);
    expect(await getSubscriber(client.username, client.defaultListId, 'ok2@x.com')).toMatchObject({ subscribed: true });
  });

  it('the reviewer\'s file (two quoted 250 KB cells): failed with a cause naming the line, not stuck', async () => {
    const cell = `"${'y'.repeat(250_000)}"`;
    const { client, fileId } = await upload(['email', 'ok1@x.com', cell, cell, 'ok2@x.com'].join('\n') + '\n');
    expect((await runWorker(client.username, fileId)).map((r) => r.outcome)).toEqual(['failed']);
    const file = await getFile(client, fileId);
    expect(file).toMatchObject({ status: 'failed', failure_cause: `line 3 is longer than ${MAX_ROW_BYTES} bytes; the import stops there`, finished_at: expect.any(String) as string });
  });

  it(`a file whose runs fail ${MAX_STALLED_INVOCATIONS} times in a row without progress is failed by the next run, with the last error`, async () => {
    const { client, fileId } = await upload(['email', ...Array.from({ length: 30 }, (_, i) => `s${i}@x.com`)].join('\n') + '\n');
    for (let i = 0; i < MAX_STALLED_INVOCATIONS; i++) {
      const crash = crashAtCheckpoint(1, 'injected crash after 1 chunks');
      await expect(runImport(client.username, fileId, { chunkLines: 10, inFlight: 1 })).rejects.toThrow('injected crash');
      crash.mockRestore();
      expect((await getFile(client, fileId)).status).toBe('processing');
    }
    expect(await runImport(client.username, fileId, { chunkLines: 10 })).toBe('failed');
    const file = await getFile(client, fileId);
    expect(file).toMatchObject({ status: 'failed', failure_cause: `processing failed ${MAX_STALLED_INVOCATIONS} times in a row without progress; last error: Error: injected crash after 1 chunks` });
    expect(await runImport(client.username, fileId)).toBe('finished-before');
  });

  it('runs that crash after saving progress are not counted as stalled', async () => {
    const { client, fileId } = await upload(['email', ...Array.from({ length: 80 }, (_, i) => `p${i}@x.com`)].join('\n') + '\n');
    for (let i = 0; i < MAX_STALLED_INVOCATIONS + 1; i++) {
      // Each run applies and checkpoints one chunk (of 10 lines), then crashes in the second.
      const crash = crashAtCheckpoint(2, 'injected crash after 2 chunks');
      await expect(runImport(client.username, fileId, { chunkLines: 10, inFlight: 1 })).rejects.toThrow('injected crash');
      crash.mockRestore();
    }
    expect(await runImport(client.username, fileId, { chunkLines: 10 })).toBe('done');
    expect((await getFile(client, fileId)).progress).toMatchObject({ lines_read: 80, created: 80 });
  });
});

describe('importsWorkerFailed (the worker\'s async onFailure destination)', () => {
  const job = jobList.find((j) => j.id === 'importsWorkerFailed')!;
  const failureEvent = (clientId: string, fileId: number) => ({
    version: '1.0',
    requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 3 },
    requestPayload: s3Event(sourceKey(clientId, fileId)),
    responsePayload: { errorType: 'ValidationException', errorMessage: 'Item size has exceeded the maximum allowed size' },
  });

  it('marks a file no live worker holds as failed, with the error as cause', async () => {
    const { client, fileId } = await upload('email\na@x.com\n');
    expect(await invokeJob(job, failureEvent(client.username, fileId))).toEqual([{ key: sourceKey(client.username, fileId), failed: true }]);
    expect(await getFile(client, fileId)).toMatchObject({
      status: 'failed',
      failure_cause: 'the import worker gave up after 3 attempts: Item size has exceeded the maximum allowed size',
    });
  });

  it('leaves a file a live worker holds, and a finished file, as they are', async () => {
    const { client, fileId } = await upload('email\na@x.com\n');
    expect(await claimFile(client.username, fileId, 'live-worker', Date.now() + 60_000)).toBeDefined();
    expect(await invokeJob(job, failureEvent(client.username, fileId))).toEqual([{ key: sourceKey(client.username, fileId), failed: false }]);
    expect(await readFile(client.username, fileId)).toMatchObject({ status: 'processing', leaseOwner: 'live-worker' });

    const done = await upload('email\nb@x.com\n');
    expect((await runWorker(done.client.username, done.fileId)).map((r) => r.outcome)).toEqual(['done']);
    expect(await invokeJob(job, failureEvent(done.client.username, done.fileId))).toEqual([{ key: sourceKey(done.client.username, done.fileId), failed: false }]);
    expect(await getFile(done.client, done.fileId)).toMatchObject({ status: 'done', failure_cause: null });
  });
});

describe('update_list and writes between the lines and the sweep', () => {
  it('a member of the file updated, confirmed or bounced after its line was applied is not unsubscribed as absent', async () => {
    const client = await newClient(service);
    const listId = client.defaultListId;
    await applySubscribers(client.username, listId, [
      { line: 1, email: 'in-file@ex.com', subscribed: true },
      { line: 2, email: 'in-file2@ex.com', subscribed: true },
      { line: 3, email: 'absent@ex.com', subscribed: true },
    ]);
    const { fileId } = await upload('email\nin-file@ex.com\nin-file2@ex.com\n', { updateList: true, client });
    // Run 1 applies and saves the lines (one chunk), starts the sweep and dies after its first page is applied, unsaved.
    // Checkpoints: the line chunk, the sweep's start, then the first sweep page's (its lines applied): that one fails.
    const crash = crashAtCheckpoint(3, 'injected crash in the sweep');
    await expect(runImport(client.username, fileId)).rejects.toThrow('injected crash');
    crash.mockRestore();
    expect((await readFile(client.username, fileId))?.progress.phase).toBe('sweep');
    // Meanwhile the API updates one member of the file (its lastOpId is no longer the file's line).
    await applySubscribers(client.username, listId, [{ line: 1, email: 'in-file@ex.com', data: { data_city: 'Oslo' } }]);
    expect(await runImport(client.username, fileId)).toBe('done');
    expect(await getSubscriber(client.username, listId, 'in-file@ex.com')).toMatchObject({ subscribed: true, data: { data_city: 'Oslo' } });
    expect(await getSubscriber(client.username, listId, 'in-file2@ex.com')).toMatchObject({ subscribed: true });
    expect(await getSubscriber(client.username, listId, 'absent@ex.com')).toMatchObject({ subscribed: false, unsubscribedCause: 'PUBLISHER' });
    expect((await getFile(client, fileId)).progress).toMatchObject({ unsubscribed_absent: 1 });
  });
});
