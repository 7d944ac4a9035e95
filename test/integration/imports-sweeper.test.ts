import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { invokeJob, scheduledEvent } from '../../infra/local/jobs.js';
import { config } from '../../shared/config.js';
import { listUnfinishedImports, readFile } from '../../shared/imports/files.js';
import { jobList } from '../../shared/jobs.js';
import { s3 } from '../../shared/s3.js';
import { newClient, request, useService, type TestClient, type ApiBody } from '../helpers/service.js';
import { csvRoute, eventLines, runWorker, s3Event, snapshot, useLoopbackImports } from './imports-helpers.js';
import { countSubscribers } from '../helpers/subscribers.js';

const service = useService();
const files = useLoopbackImports();
const LINES = 4000;
/**
 * The killed worker's file: more lines than the worker's window of chunks in flight (8 × 500), so the kill lands
 * with lines still unread. On a 4,000-line file the eight chunks settled together and, under a loaded full suite, the
 * poll first saw the last line (progress 4001, only 'done' unsaved) — a kill after the whole file, not mid-import.
 */
const CRASH_LINES = 6000;
const job = (id: string) => jobList.find((j) => j.id === id)!;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function upload(client: TestClient, lines = LINES): Promise<number> {
  files.server.routes.set('/crash.csv', csvRoute(['email,data_n', ...Array.from({ length: lines }, (_, i) => `crash${i}@example.com,${i}`)].join('\n') + '\n'));
  const reply = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, { method: 'POST', token: client.token, body: { email_list_id: client.defaultListId, url: `${files.server.url}/crash.csv` } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id;
}

/** The sweeper as its schedule runs it, then the worker as the marker's S3 notification invokes it. */
async function sweepAndDeliver(clientId: string, fileId: number) {
  const summary = (await invokeJob(job('importsSweeper'), scheduledEvent())) as { resumed: Array<{ clientId: string; fileId: number }> };
  const markers = await s3.send(new ListObjectsV2Command({ Bucket: config.importsBucket, Prefix: `uploads/${clientId}/${fileId}/resume-` }));
  for (const marker of markers.Contents ?? []) await invokeJob(job('importsWorker'), s3Event(marker.Key!));
  return summary;
}

describe('nothing stuck: the sweeper resumes an import whose worker was killed', () => {
  it('kill -9 of the worker process mid-import; after the lease the sweeper resumes it: exact counts, one event per subscriber, off the index', async () => {
    const client = await newClient(service, { premiumEvents: true });
    const fileId = await upload(client, CRASH_LINES);
    expect(await listUnfinishedImports()).toContainEqual({ clientId: client.username, fileId });

    // A worker in its own process, killed for real once it has applied part of the file.
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/import-child.ts', client.username, String(fileId)], {
      cwd: resolve(import.meta.dirname, '../..'),
      // Its file lease runs out soon after it dies.
      env: { ...process.env, IMPORT_LEASE_SECONDS: '5' },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)));
    let killedAt = 0;
    for (let i = 0; i < 3000 && killedAt === 0; i++) {
      const line = (await readFile(client.username, fileId))?.progress.line ?? 0;
      if (line >= 500) {
        child.kill('SIGKILL');
        killedAt = line;
      } else await sleep(20);
    }
    expect(await exited).toBe('SIGKILL');
    const stuck = (await readFile(client.username, fileId))!;
    expect(stuck.status).toBe('processing');
    expect(stuck.progress.line).toBeGreaterThanOrEqual(500);
    expect(stuck.progress.line).toBeLessThan(CRASH_LINES + 1);

    // While the dead worker's lease runs, the sweeper leaves the file alone; after it, it resumes it.
    const early = await sweepAndDeliver(client.username, fileId);
    if (Date.now() < stuck.leaseUntil!) expect(early.resumed).not.toContainEqual({ clientId: client.username, fileId });
    await sleep(Math.max(0, stuck.leaseUntil! - Date.now() + 50));
    const late = await sweepAndDeliver(client.username, fileId);
    expect([...early.resumed, ...late.resumed]).toContainEqual({ clientId: client.username, fileId });

    const file = (await request(`${service.url}/v1/files/${fileId}`, { token: client.token })).body;
    expect(file).toMatchObject({ status: 'done', progress: expect.objectContaining({ created: CRASH_LINES, subscribed: CRASH_LINES }) as object });
    const stored = await snapshot(client.username, client.defaultListId);
    expect(stored).toHaveLength(CRASH_LINES);
    // The count comes from the table's stream (countSubscribers drains it); the sweeper's next runs, at most every second for
    // 30 s, resume anything the dead worker left.
    for (let i = 0; i < 30 && (await countSubscribers(client.username, client.defaultListId)).subscribed !== CRASH_LINES; i++) {
      await sleep(1000);
      await sweepAndDeliver(client.username, fileId);
    }
    expect(await countSubscribers(client.username, client.defaultListId)).toMatchObject({ subscribed: CRASH_LINES, unsubscribed: 0 });
    // No event lost with the killed worker: every address has its raw record.
    const raw = await eventLines(client.username, 'nl_subscribe');
    expect(new Set(raw.map((line) => /crash\d+@example\.com/.exec(line)?.[0])).size).toBe(CRASH_LINES);
    // And none twice in what the publisher downloads (a re-applied chunk's records carry the same hidden id).
    const day = new Date().toISOString().slice(0, 10);
    const published = (await request(`${service.url}/v1/newsletters/events/nl_subscribe/${day}`, { token: client.token })).text.trim().split('\n').slice(1);
    expect(published).toHaveLength(CRASH_LINES);
    expect(new Set(published.map((row) => /crash\d+@example\.com/.exec(row)?.[0])).size).toBe(CRASH_LINES);
    expect(await listUnfinishedImports()).not.toContainEqual({ clientId: client.username, fileId });
    expect((await sweepAndDeliver(client.username, fileId)).resumed).not.toContainEqual({ clientId: client.username, fileId });
  });

  it('an uploaded file whose worker never started (a lost notification) is resumed once it has waited a lease', async () => {
    const client = await newClient(service);
    const fileId = await upload(client);
    expect((await sweepAndDeliver(client.username, fileId)).resumed).not.toContainEqual({ clientId: client.username, fileId });
    await sleep(config.importLeaseSeconds * 1000 + 100);
    expect((await sweepAndDeliver(client.username, fileId)).resumed).toContainEqual({ clientId: client.username, fileId });
    expect((await readFile(client.username, fileId))?.status).toBe('done');
    expect(await countSubscribers(client.username, client.defaultListId)).toMatchObject({ subscribed: LINES });
  });

  it('a file the worker cannot progress on fails with a cause after a bounded number of resumptions', async () => {
    const client = await newClient(service);
    const fileId = await upload(client);
    // The stored source disappears: every run fails before it progresses.
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    const stored = (await readFile(client.username, fileId))!;
    await s3.send(new DeleteObjectCommand({ Bucket: config.importsBucket, Key: stored.objectKey }));
    for (let round = 0; round < 6 && (await readFile(client.username, fileId))?.status !== 'failed'; round++) {
      await runWorker(client.username, fileId).catch(() => undefined);
      await sleep(config.importLeaseSeconds * 1000 + 100);
      await sweepAndDeliver(client.username, fileId).catch(() => undefined);
    }
    const file = (await readFile(client.username, fileId))!;
    expect(file.status).toBe('failed');
    expect(file.failureCause).toMatch(/without progress/);
    expect(await listUnfinishedImports()).not.toContainEqual({ clientId: client.username, fileId });
  });
});
