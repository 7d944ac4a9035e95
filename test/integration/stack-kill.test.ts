/**
 * Nothing lost when the whole local stack dies: `npm start`'s process group (the gateway, the jobs, the stream
 * poller, DynamoDB Local, the S3 emulator) is killed with SIGKILL at a random moment of a 20,000-line batch and of
 * an import, then started again on the same data. With no new write, within a minute: count = recount, one
 * nl_subscribe per subscribed address of the list, and the list's day sums equal its count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, localAwsEnv } from '../../infra/local/services.js';
import { localNames } from '../../infra/local/env.js';
import { keys } from '../../shared/db/keys.js';
import { seeded } from '../helpers/kill.js';

const root = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'nl-kill-'));
const ports = { PORT: 0, DYNAMODB_PORT: 0, S3_PORT: 0 };
let stack: ChildProcess | undefined;
let csv: http.Server;
const LINES = 20_000;
/** The import's lines: at DynamoDB Local's speed of conditional writes, a few seconds of work to kill it in. */
const IMPORT_LINES = 5_000;
const random = seeded(Number(process.env.KILL_SEED ?? 20261129));

/** Starts `npm start`'s entry in a process group of its own; resolves once it serves requests. */
async function startStack(): Promise<void> {
  stack = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', openSync(join(dataDir, 'stack.log'), 'a'), openSync(join(dataDir, 'stack.log'), 'a')],
    // Only what `npm start` gets from a shell: this process's environment points at the test run's emulators.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_OPTIONS: '--openssl-legacy-provider',
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DATA_DIR: dataDir,
      IMPORT_ALLOW_LOOPBACK: 'true',
      // The killed worker's lease has run out when the sweeper runs at the restart.
      IMPORT_LEASE_SECONDS: '1',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    },
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${ports.PORT}/v1/openapi.json`).then((r) => r.ok, () => false);
    if (up) return;
    if (Date.now() > deadline || stack.exitCode !== null) throw new Error('the local stack did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGKILL to the whole process group; resolves once the group leader is gone and the ports are free. */
async function killStack(): Promise<void> {
  const child = stack!;
  const exited = new Promise<void>((done) => (child.exitCode !== null ? done() : child.once('exit', () => done())));
  process.kill(-child.pid!, 'SIGKILL');
  await exited;
  for (const port of Object.values(ports)) {
    while (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) await new Promise((r) => setTimeout(r, 100));
  }
}

const demo = () => JSON.parse(readFileSync(join(dataDir, 'demo-client.json'), 'utf8')) as { username: string; api_key: string; list_ids: number[] };
const base = () => `http://127.0.0.1:${ports.PORT}`;
async function tokenOf(): Promise<string> {
  const { username, api_key } = demo();
  return ((await (await fetch(`${base()}/v1/token?username=${username}&password=${encodeURIComponent(api_key)}`)).json()) as { token: string }).token;
}

/** Waits (at most a minute) until the stack's stream has applied everything written so far. */
async function drained(): Promise<void> {
  const env = JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as { LOCAL_STREAM_URL: string };
  const res = await fetch(`${env.LOCAL_STREAM_URL}/_local/stream/drain`, { signal: AbortSignal.timeout(60_000) });
  expect(res.status).toBe(200);
}

function clients() {
  const credentials = { accessKeyId: localAwsEnv.AWS_ACCESS_KEY_ID, secretAccessKey: localAwsEnv.AWS_SECRET_ACCESS_KEY };
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${ports.DYNAMODB_PORT}`, region: localAwsEnv.AWS_REGION, credentials }));
  const s3 = new S3Client({ endpoint: `http://127.0.0.1:${ports.S3_PORT}`, region: localAwsEnv.AWS_REGION, forcePathStyle: true, credentials });
  return { ddb, s3 };
}

/** Waits (at most a minute) until the write has stored its first line, so the kill lands mid-write on any machine. */
async function firstStored(listId: number, prefix: string): Promise<void> {
  const { ddb, s3 } = clients();
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      const page = await ddb.send(new QueryCommand({ TableName: localNames.TABLE_NAME, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.subscribersPartition(demo().username, listId) }, Limit: 50 }));
      if ((page.Items ?? []).some((i) => String(i.email).startsWith(prefix))) return;
      expect(Date.now(), 'the write stored nothing within a minute').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    ddb.destroy();
    s3.destroy();
  }
}

/** The checks of a list after the restart: count = recount, one nl_subscribe per subscribed address, day sums = count. */
async function expectExact(listId: number): Promise<number> {
  const clientId = demo().username;
  const { ddb, s3 } = clients();
  try {
    const query = async (pk: string) => {
      const items: Array<Record<string, unknown>> = [];
      for await (const page of paginateQuery({ client: ddb }, { TableName: localNames.TABLE_NAME, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true, Limit: 1000 })) items.push(...(page.Items ?? []));
      return items;
    };
    const subscribed = (await query(keys.subscribersPartition(clientId, listId))).filter((i) => i.subscribed === true).map((i) => String(i.email)).sort();
    const count = (await (await fetch(`${base()}/v1/newsletters/lists/${listId}/subscribers/count`, { headers: { 'x-service-client-token': await tokenOf() } })).json()) as { subscribed: number };
    expect(count.subscribed).toBe(subscribed.length);
    const days = await query(keys.listDaysPartition(clientId, listId));
    expect(days.reduce((n, d) => n + Number(d.net ?? 0), 0)).toBe(subscribed.length);
    // The assembler keeps one line per hidden id: the list's nl_subscribe ids, by address.
    const ids = new Map<string, Set<string>>();
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: localNames.EVENTS_BUCKET, Prefix: `raw/${clientId}/nl_subscribe/` }));
    for (const { Key } of listed.Contents ?? []) {
      const text = await (await s3.send(new GetObjectCommand({ Bucket: localNames.EVENTS_BUCKET, Key }))).Body!.transformToString();
      for (const line of text.trim().split('\n')) {
        const e = JSON.parse(line) as { email: string; email_list_id: number; _id: string };
        if (e.email_list_id === listId) ids.set(e.email, (ids.get(e.email) ?? new Set()).add(e._id));
      }
    }
    expect([...ids.keys()].sort()).toEqual(subscribed);
    expect([...ids.values()].filter((s) => s.size !== 1)).toEqual([]);
    return subscribed.length;
  } finally {
    ddb.destroy();
    s3.destroy();
  }
}

beforeAll(async () => {
  for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = await freePort();
  csv = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end(['email', ...Array.from({ length: IMPORT_LINES }, (_, i) => `imported${i}@kill.example`)].join('\n') + '\n');
  });
  await new Promise<void>((done) => csv.listen(0, '127.0.0.1', done));
  await startStack();
}, 120_000);

afterAll(async () => {
  if (stack && stack.exitCode === null) await killStack();
  csv.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the whole local stack killed with SIGKILL', () => {
  it('during a 20,000-line batch: after a restart, count = recount, one nl_subscribe per subscribed address, day sums = count', async () => {
    const listId = demo().list_ids[0];
    const body = JSON.stringify(Array.from({ length: LINES }, (_, i) => ({ email: `batch${i}@kill.example` })));
    const post = fetch(`${base()}/v1/newsletters/lists/${listId}/subscribers`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-client-token': await tokenOf() }, body }).catch(() => undefined);
    await firstStored(listId, 'batch');
    await new Promise((r) => setTimeout(r, random() * 2_000));
    await killStack();
    await post;
    await startStack();
    await drained();
    const subscribed = await expectExact(listId);
    // The kill landed mid-batch (else this proves little): part of it, not none and not all, was stored.
    expect(subscribed).toBeGreaterThan(0);
    expect(subscribed).toBeLessThan(LINES);
  }, 240_000);

  it('during an import: after a restart the import resumes; count = recount, one nl_subscribe per subscribed address, day sums = count', async () => {
    const listId = demo().list_ids[1];
    const created = await fetch(`${base()}/v1/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-client-token': await tokenOf() },
      body: JSON.stringify({ email_list_id: listId, url: `http://127.0.0.1:${(csv.address() as AddressInfo).port}/kill.csv` }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    await firstStored(listId, 'imported');
    await new Promise((r) => setTimeout(r, random() * 1_500));
    await killStack();
    await startStack();
    // The sweeper runs at start and resumes the import, whose lease (1 s here) has run out.
    const deadline = Date.now() + 180_000;
    for (;;) {
      const file = (await (await fetch(`${base()}/v1/files/${id}`, { headers: { 'x-service-client-token': await tokenOf() } })).json()) as { status: string };
      if (file.status === 'done') break;
      expect(Date.now(), `${JSON.stringify(file)}\n${readFileSync(join(dataDir, 'stack.log'), 'utf8').slice(-3000)}`).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 500));
    }
    await drained();
    expect(await expectExact(listId)).toBeGreaterThanOrEqual(IMPORT_LINES);
  }, 300_000);
});
