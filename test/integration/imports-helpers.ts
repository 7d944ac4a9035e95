import { afterAll, beforeAll, expect, vi } from 'vitest';
/** Helpers of the import tests: a loopback file server that counts requests, the worker invoked as S3 would, list snapshots. */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { invokeJob } from '../../infra/local/jobs.js';
import { config } from '../../shared/config.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { sourceKey } from '../../shared/imports/objects.js';
import { jobList } from '../../shared/jobs.js';
import { s3 } from '../../shared/s3.js';
import { request, type ApiBody, type Service, type TestClient } from '../helpers/service.js';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface FileServer {
  /** Base URL on 127.0.0.1. */
  url: string;
  port: number;
  /** Port of the same routes on [::1]. */
  port6: number;
  /** Requests received, by path (both addresses). */
  hits: Map<string, number>;
  total(): number;
  routes: Map<string, Route>;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 and ::1 that serves `routes` and counts every request it gets. */
export async function startFileServer(): Promise<FileServer> {
  const hits = new Map<string, number>();
  const routes = new Map<string, Route>();
  const handler: http.RequestListener = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) return route(req, res);
    res.writeHead(404).end('not found');
  };
  const v4 = http.createServer(handler);
  const v6 = http.createServer(handler);
  await new Promise<void>((done) => v4.listen(0, '127.0.0.1', done));
  await new Promise<void>((done) => v6.listen(0, '::1', done));
  const port = (v4.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    port6: (v6.address() as AddressInfo).port,
    hits,
    routes,
    total: () => [...hits.values()].reduce((a, b) => a + b, 0),
    close: async () => {
      v4.closeAllConnections();
      v6.closeAllConnections();
      await Promise.all([new Promise((d) => v4.close(d)), new Promise((d) => v6.close(d))]);
    },
  };
}

/** A route answering with a CSV body. */
/**
 * For one test file: a loopback file server, imports allowed to fetch from
 * loopback, and a one-second lease so crashed workers are taken over quickly.
 * Returns a holder whose `server` is set before the tests run.
 */
export function useLoopbackImports(): { server: FileServer } {
  const holder = {} as { server: FileServer };
  beforeAll(async () => {
    holder.server = await startFileServer();
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    process.env.IMPORT_LEASE_SECONDS = '1';
  });
  afterAll(async () => {
    delete process.env.IMPORT_ALLOW_LOOPBACK;
    delete process.env.IMPORT_LEASE_SECONDS;
    await holder.server.close();
  });
  return holder;
}

export const csvRoute =
  (body: string | Buffer, contentType = 'text/csv; charset=utf-8'): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

/** An S3 ObjectCreated event for a key, as the bucket notification sends it. */
export function s3Event(key: string) {
  return { Records: [{ eventVersion: '2.1', eventSource: 'aws:s3', eventName: 'ObjectCreated:Put', s3: { bucket: { name: config.importsBucket }, object: { key } } }] };
}

const worker = jobList.find((j) => j.id === 'importsWorker')!;

/** Runs the import worker's real handler for the stored file, as S3 would invoke it. */
export async function runWorker(clientId: string, fileId: number) {
  return invokeJob(worker, s3Event(sourceKey(clientId, fileId))) as Promise<Array<{ key: string; outcome: string }>>;
}

/**
 * Posts an import by URL of `csv` (served by `files`, loopback allowed) through the gateway and runs the worker
 * to the end; returns what POST /v1/files answered and the final imported file.
 */
export async function importByUrl(
  service: Service,
  files: FileServer,
  client: TestClient,
  listId: number,
  csv: string | Buffer,
  { updateList = false, path = `/f-${Math.random().toString(36).slice(2)}.csv` } = {},
) {
  process.env.IMPORT_ALLOW_LOOPBACK = 'true';
  files.routes.set(path, csvRoute(csv));
  const body = { email_list_id: listId, url: `${files.url}${path}`, update_list: updateList };
  const created = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, { method: 'POST', token: client.token, body });
  expect(created.status, created.text).toBe(201);
  const results = await runWorker(client.username, created.body.id);
  expect(results.map((r) => r.outcome)).toEqual([expect.stringMatching(/^(done|failed)$/)]);
  const final = await request<ApiBody<'filesGet'>>(`${service.url}/v1/files/${created.body.id}`, { token: client.token });
  expect(final.status).toBe(200);
  return { created: created.body, file: final.body };
}

/** The subscribers of a list as stored, without the volatile fields (times, versions). */
export async function snapshot(clientId: string, listId: number) {
  const stored = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
    ConsistentRead: true,
  });
  const items = stored.map(({ email, subscribed, unsubscribedCause, guid, data, openTrackingConsent, lastOpId, lastOutcome }) => ({
    email,
    subscribed,
    unsubscribedCause,
    guid,
    data,
    openTrackingConsent,
    lastOpId,
    lastOutcome,
  }));
  return items;
}

/** Lines of raw event records of a client and event (all days). */
export async function eventLines(clientId: string, event: string): Promise<string[]> {
  const lines: string[] = [];
  let token: string | undefined;
  do {
    const out = await s3.send(new ListObjectsV2Command({ Bucket: config.eventsBucket, Prefix: `raw/${clientId}/${event}/`, ContinuationToken: token }));
    for (const object of out.Contents ?? []) {
      const body = await s3.send(new GetObjectCommand({ Bucket: config.eventsBucket, Key: object.Key! }));
      lines.push(...(await body.Body!.transformToString()).split('\n').filter(Boolean));
    }
    token = out.NextContinuationToken;
  } while (token);
  return lines;
}

/**
 * Crashes a worker through its DynamoDB client (fault injection only): the
 * `n`-th checkpoint write (after its chunk was applied) fails with `message`,
 * as a worker killed between applying a chunk and saving it would leave the
 * file. Restored by vi.restoreAllMocks (or the returned restore).
 */
export function crashAtCheckpoint(n: number, message: string) {
  const send = ddb.send.bind(ddb);
  let checkpoints = 0;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
  return vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
    if (command instanceof UpdateCommand && (command.input.UpdateExpression ?? '').startsWith('SET progress = :p') && ++checkpoints === n) {
      return Promise.reject(new Error(message));
    }
    return send(command as never);
  }) as typeof ddb.send);
}
