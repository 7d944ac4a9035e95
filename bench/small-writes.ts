/**
 * Small writes to a list during a bulk write of it, for bench:subscribers and
 * bench:imports: the stream of single-subscriber POSTs, opt-in confirmations,
 * unsubscribes and users/delete through the gateway, their latencies, and one
 * import in a process of its own (bench/imports.ts --child). Each answers 200
 * with p99 ≤ 1 s while the list is bulk-written (no write waits for another).
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { semiSpaceMb } from '../infra/heap.js';
import { jobs } from '../shared/jobs.js';
import type { ApiBody } from '../test/helpers/api-body.js';

/** Every small write of a scenario must answer within this (p99). */
export const P99_BOUND_MS = 1_000;

type SmallKind = 'subscribe' | 'confirm' | 'unsubscribe' | 'users/delete';
export interface SmallResult {
  kind: SmallKind | 'opt-in form';
  status: number;
  ms: number;
  detail?: string;
}

/**
 * Until `bulk` settles, every 100 ms one small write to the list, in turn: a
 * single-subscriber POST, an opt-in confirmation (a form submission, then its
 * confirmation link from the outbox followed: the link's GET is what is
 * timed), an unsubscribe (POST with subscribed false) of a member and a
 * users/delete of another member (`member<i>@bench.example`, i < members).
 */
export async function smallWritesDuring(
  url: string,
  client: { id: string; token: string; trackingKey: string },
  listId: number,
  members: number,
  tag: string,
  bulk: () => Promise<unknown>,
): Promise<SmallResult[]> {
  const { createForm } = await import('../shared/clients/clients.js');
  const { outboxDir } = await import('../shared/mail/outbox-mailer.js');
  const formKey = await createForm(client.id, { listIds: [listId], global: false });
  const headers = { 'content-type': 'application/json', 'x-service-client-token': client.token };
  const send = async (kind: SmallResult['kind'], path: string, init: RequestInit, expect?: string): Promise<SmallResult> => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, init);
    const text = await res.text();
    const ms = performance.now() - started;
    const detail = res.status !== 200 ? text.slice(0, 200) : expect && !text.includes(expect) ? `answer without "${expect}"` : undefined;
    return { kind, status: detail && res.status === 200 ? 0 : res.status, ms, detail };
  };
  const seen = new Set<string>();
  const links = new Map<string, string>();
  /** Reads the outbox files not read yet. */
  const scan = async () => {
    for (const name of await readdir(outboxDir())) {
      if (!name.endsWith('.eml') || name.startsWith('.') || seen.has(name)) continue;
      seen.add(name);
      const raw = (await readFile(join(outboxDir(), name), 'utf8')).replace(/=\r?\n/g, '');
      const to = /^To: .*?([^\s<>]+@[^\s<>]+)/im.exec(raw)?.[1];
      const link = /https?:\/\/\S+\/v1\/optin\/confirm\/[A-Za-z0-9_-]+/.exec(raw)?.[0];
      if (to && link) links.set(to.toLowerCase(), link);
    }
  };
  let scanning = Promise.resolve();
  /**
   * The confirmation link mailed to `email` (each outbox file is read once). One scan at a time: two concurrent
   * scans can miss a message the other has marked seen but not yet read.
   */
  const linkOf = (email: string): Promise<string | undefined> => {
    scanning = scanning.catch(() => undefined).then(scan);
    return scanning.then(() => links.get(email));
  };
  const confirmOne = async (i: number): Promise<SmallResult[]> => {
    const email = `optin-${tag}-${i}@bench.example`;
    const form = await send('opt-in form', `/v1/subscribe/${client.trackingKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, form_key: formKey }).toString(),
    });
    if (form.status !== 200) return [form];
    const link = await linkOf(email);
    if (!link) return [form, { kind: 'confirm', status: 0, ms: 0, detail: `no confirmation mail to ${email}` }];
    return [form, await send('confirm', link.slice(link.indexOf('/v1/')), {}, 'Subscription confirmed')];
  };
  const subscribersPath = `/v1/newsletters/lists/${listId}/subscribers`;
  const post = (kind: SmallKind, path: string, body: unknown) => send(kind, path, { method: 'POST', headers, body: JSON.stringify(body) });
  const small: Array<Promise<SmallResult[]>> = [];
  let done = false;
  const bulkWrite = bulk().finally(() => (done = true));
  bulkWrite.catch(() => undefined);
  for (let i = 0; !done; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const kind = (['subscribe', 'confirm', 'unsubscribe', 'users/delete'] as const)[i % 4];
    const member = `member${i % members}@bench.example`;
    if (kind === 'subscribe') small.push(post(kind, subscribersPath, { email: `single-${tag}-${i}@bench.example` }).then((r) => [r]));
    if (kind === 'confirm') small.push(confirmOne(i));
    if (kind === 'unsubscribe') small.push(post(kind, subscribersPath, { email: member, subscribed: false }).then((r) => [r]));
    if (kind === 'users/delete') small.push(post(kind, '/v1/users/delete', [{ email: member }]).then((r) => [r]));
  }
  await bulkWrite;
  return (await Promise.all(small)).flat();
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
export const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** Latency per kind of small write and overall (the opt-in form changes no list: shown apart, not in the overall). */
export function smallStats(results: SmallResult[]) {
  const rows: Array<{ kind: string; n: number; p50: number; p99: number; max: number; not200: number }> = [];
  const row = (kind: string, of: SmallResult[]) => {
    const ms = of.map((r) => r.ms).sort((a, b) => a - b);
    rows.push({ kind, n: of.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms.at(-1) ?? 0, not200: of.filter((r) => r.status !== 200).length });
  };
  for (const kind of ['subscribe', 'confirm', 'unsubscribe', 'users/delete']) row(kind, results.filter((r) => r.kind === kind));
  row('all four', results.filter((r) => r.kind !== 'opt-in form'));
  row('(opt-in form)', results.filter((r) => r.kind === 'opt-in form'));
  return rows;
}

export function describeSmall(results: SmallResult[], indent = '    '): string {
  return smallStats(results)
    .map((r) => `${indent}${r.kind.padEnd(14)} ${String(r.n).padStart(4)}  p50 ${r.p50.toFixed(0).padStart(5)} ms  p99 ${r.p99.toFixed(0).padStart(5)} ms  max ${r.max.toFixed(0).padStart(5)} ms  not 200: ${r.not200}`)
    .join('\n');
}

/** The overall p50 and p99 of the four kinds of a run. */
export function overall(results: SmallResult[]): { n: number; p50: number; p99: number } {
  const all = smallStats(results).find((r) => r.kind === 'all four')!;
  return { n: all.n, p50: all.p50, p99: all.p99 };
}

export function smallFailures(scenario: string, results: SmallResult[]): string[] {
  const failures = results.filter((r) => r.status !== 200).map((r) => `${scenario}: ${r.kind} answered ${r.status}: ${r.detail ?? ''}`);
  for (const r of smallStats(results)) if (r.p99 > P99_BOUND_MS) failures.push(`${scenario}: ${r.kind} p99 ${r.p99.toFixed(0)} ms > ${P99_BOUND_MS} ms`);
  if (!results.some((r) => r.kind === 'confirm')) failures.push(`${scenario}: no small write ran`);
  return failures.slice(0, 20);
}

export interface ImportChildResult {
  fileId: number;
  size: number;
  uploadMs: number;
  workerMs: number;
  startRss: number;
  uploadPeakRss: number;
  workerPeakRss: number;
  linesRead: number;
  calls: string[];
  /** The import process's CPU time (user + system) from the download's start to the worker's end, in ms. */
  cpuMs: number;
}

/**
 * The import process's V8 flags: the worker function's young generation in Lambda (its NODE_OPTIONS,
 * infra/constructs/service-function.ts), not Node's smaller default, with which it scavenges far more often.
 */
const IMPORT_PROCESS_FLAGS = [`--max-semi-space-size=${semiSpaceMb(jobs.importsWorker.memoryMb)}`];

/**
 * One import in a process of its own (bench/imports.ts --child: download + store, then the worker, with the worker
 * function's heap); `onWorker` when the worker starts. Settles when the child prints its result, then ends the child:
 * its exit can come long after (pending timers), and the small writes would run on against an idle list.
 */
export function runImportChild(args: string[], onWorker: () => void = () => undefined): Promise<ImportChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, ...IMPORT_PROCESS_FLAGS, join(import.meta.dirname, 'imports.ts'), '--child', ...args], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let settled = false;
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('"workerStarted"')) onWorker();
      const result = out
        .split('\n')
        .slice(0, -1) // whole lines only
        .filter((line) => line.includes('"workerMs"'))
        .map((line) => JSON.parse(line) as ImportChildResult)[0];
      if (result && !settled) {
        settled = true;
        resolve(result);
        proc.kill();
      }
    });
    proc.once('exit', (code) => {
      if (!settled) reject(new Error(`import child exited ${code}: ${out}`));
    });
  });
}

/**
 * One import of `fileUrl` into `listId` with the stream of small writes to the same list from the worker's start
 * to its end (the list holds `members` members, `member<i>@bench.example`).
 */
export async function importWithSmallWrites(
  url: string,
  client: { id: string; token: string; trackingKey: string },
  listId: number,
  members: number,
  tag: string,
  childArgs: string[],
): Promise<{ run: ImportChildResult; small: SmallResult[] }> {
  let started!: () => void;
  const workerStarted = new Promise<void>((done) => (started = done));
  const importDone = runImportChild(childArgs, started);
  importDone.catch(() => started());
  await workerStarted;
  const small = await smallWritesDuring(url, client, listId, members, tag, () => importDone);
  return { run: await importDone, small };
}

/**
 * The raw baseline beside the small writes: a fresh client's list of `members` members, its raw items (`itemsFor`)
 * written with BatchWriteItem while the stream of smallWritesDuring goes to that list. What the stream costs plain
 * writes on this machine; the write path's bulk writes with the same stream are judged against it. Returns the
 * BatchWriteItem's time and the small writes, and with `cpu` (a span's start: bench/local-stack.ts cpuSpan) what
 * it counted over the BatchWriteItem's time.
 */
export async function rawBesideSmallWrites<Cpu>(
  url: string,
  tag: string,
  members: number,
  itemsFor: (clientId: string, listId: number) => Promise<Array<Record<string, unknown>>> | Array<Record<string, unknown>>,
  cpu?: () => () => Cpu,
): Promise<{ ms: number; small: SmallResult[]; cpu?: Cpu }> {
  const { batchWrite } = await import('../shared/db/client.js');
  const target = await clientWithMembers(url, tag, members);
  const requests = (await itemsFor(target.id, target.listId)).map((Item) => ({ PutRequest: { Item } }));
  let ms = 0;
  let used: Cpu | undefined;
  const small = await smallWritesDuring(url, target, target.listId, members, tag, async () => {
    const span = cpu?.();
    const started = performance.now();
    await batchWrite(requests);
    ms = performance.now() - started;
    used = span?.();
  });
  return { ms, small, cpu: used };
}

/** A fresh client (rate limits out of the way) whose default list holds `members` members, added through the gateway. */
export async function clientWithMembers(url: string, tag: string, members: number) {
  const { createClient, setClientSetting } = await import('../shared/clients/clients.js');
  const made = await createClient(`bench-${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`);
  const token = ((await (await fetch(`${url}/v1/token?username=${made.client.id}&password=${made.apiKey}`)).json()) as ApiBody<'tokenGet'>).token;
  await setClientSetting(made.client.id, 'rateLimits', { perIpPerMinute: 1_000_000, perKeyPerMinute: 1_000_000 });
  if (members > 0) {
    const reply = await fetch(`${url}/v1/newsletters/lists/${made.client.defaultListId}/subscribers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-client-token': token },
      body: JSON.stringify(Array.from({ length: members }, (_, i) => ({ email: `member${i}@bench.example` }))),
    });
    if (reply.status !== 200) throw new Error(`members: ${reply.status}`);
  }
  return { id: made.client.id, token, trackingKey: made.client.trackingKey, listId: made.client.defaultListId };
}

/**
 * The raw baseline's items for an import of `rows` (each row's cells after the header's): the items the worker
 * writes for them, built the worker's way (the header read, each record made a line with its opId and the file's
 * mark, the domain's rules applied: consent record included). So "raw" writes the same items as the import, only
 * without reads or conditions (both sides' records then go through the same stream consumer).
 */
export async function importRawItems(clientId: string, listId: number, fileId: number, header: string[], rows: Iterable<string[]>) {
  const { readHeader, recordToLine } = await import('../shared/imports/csv.js');
  const { importFileId, lineOpId } = await import('../shared/imports/worker.js');
  const { applyLine } = await import('../shared/subscribers/rules.js');
  const { toItem } = await import('../shared/subscribers/store.js');
  const columns = readHeader(header);
  // Dated 1 ms apart, as the worker dates its chunks as it goes (the stream consumer files them by second).
  const start = Date.now();
  const items: Array<Record<string, unknown>> = [];
  let line = 1;
  for (const cells of rows) {
    line++;
    const parsed = recordToLine(columns, cells, line, lineOpId(fileId, line));
    if ('cause' in parsed) throw new Error(`raw baseline: line ${line} is not valid: ${parsed.cause}`);
    items.push(toItem(clientId, listId, applyLine(undefined, { ...parsed, importFileId: importFileId(fileId) }, new Date(start + line).toISOString(), listId).next!));
  }
  return items;
}

/** The names of an item's attributes, sorted. */
const attributeNames = (item: Record<string, unknown>) =>
  Object.keys(item)
    .filter((name) => item[name] !== undefined)
    .sort()
    .join(',');

/**
 * Throws unless a raw baseline's item has the attributes of the item the service wrote for the same line (the
 * dates differ, so the sizes by a few bytes); returns the two sizes for the bench's output.
 */
export function checkRawItem(raw: Record<string, unknown>, written: Record<string, unknown> | undefined, what: string): string {
  if (!written || attributeNames(written) !== attributeNames(raw)) throw new Error(`raw items are not ${what}: ${attributeNames(raw)} vs ${written ? attributeNames(written) : 'nothing written'}`);
  return `raw item ${JSON.stringify(raw).length} B of JSON, ${what} ${JSON.stringify(written).length} B (same attributes)`;
}
