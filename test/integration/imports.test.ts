import net from 'node:net';
import { once } from 'node:events';
import { NOT_ALLOWED, UNREACHABLE } from '../../shared/net/safe-fetch.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { countSubscribers } from '../helpers/subscribers.js';
import { newClient, request, useService, type TestClient, type ApiBody, type ErrorBody } from '../helpers/service.js';
import { csvRoute, eventLines, importByUrl, runWorker, startFileServer, type FileServer } from './imports-helpers.js';
import { createHash } from 'node:crypto';

const service = useService();
let files: FileServer;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

beforeAll(async () => {
  files = await startFileServer();
});
afterAll(() => files.close());
afterEach(() => {
  delete process.env.IMPORT_ALLOW_LOOPBACK;
  delete process.env.IMPORT_MAX_BYTES;
  delete process.env.IMPORT_FETCH_TIMEOUT_MS;
  delete process.env.IMPORT_CONNECT_TIMEOUT_MS;
});

const post = <T = ApiBody<'filesCreate'>>(client: TestClient, body: unknown) => request<T>(`${service.url}/v1/files`, { method: 'POST', token: client.token, body });
const getFile = <T = ApiBody<'filesGet'>>(client: TestClient, id: number) => request<T>(`${service.url}/v1/files/${id}`, { token: client.token });

/** Posts an import with loopback allowed and runs the worker to the end; returns the final imported file. */
const importCsv = (client: TestClient, listId: number, csv: string | Buffer, options?: { updateList?: boolean; path?: string }) => importByUrl(service, files, client, listId, csv, options);

describe('POST /v1/files: fetching the URL safely (IMPORT_ALLOW_LOOPBACK off)', () => {
  it.each([
    ['127.0.0.1', (f: FileServer) => `http://127.0.0.1:${f.port}/a.csv`],
    ['localhost', (f: FileServer) => `http://localhost:${f.port}/a.csv`],
    ['[::1]', (f: FileServer) => `http://[::1]:${f.port6}/a.csv`],
    ['0.0.0.0', (f: FileServer) => `http://0.0.0.0:${f.port}/a.csv`],
    ['2130706433', (f: FileServer) => `http://2130706433:${f.port}/a.csv`],
    ['0x7f.1', (f: FileServer) => `http://0x7f.1:${f.port}/a.csv`],
    ['[::ffff:127.0.0.1]', (f: FileServer) => `http://[::ffff:127.0.0.1]:${f.port}/a.csv`],
    ['a loopback redirect to another loopback URL', (f: FileServer) => `http://127.0.0.1:${f.port}/redirect`],
  ])('refuses %s with a 400 and a cause, and fetches nothing', async (_name, target) => {
    files.routes.set('/a.csv', csvRoute('email\na@b.co\n'));
    files.routes.set('/redirect', (_req, res) => res.writeHead(302, { location: `http://localhost:${files.port}/a.csv` }).end());
    const client = await newClient(service);
    const before = files.total();
    const reply = await post<ErrorBody>(client, { email_list_id: client.defaultListId, url: target(files) });
    expect(reply.status).toBe(400);
    expect(reply.body.cause).toBe(`url: ${NOT_ALLOWED}`);
    expect(files.total() - before).toBe(0);
    expect((await request(`${service.url}/v1/files`, { token: client.token })).body).toEqual([]);
  });
});

describe('POST /v1/files: fetching with IMPORT_ALLOW_LOOPBACK=true', () => {
  it('follows a redirect from a loopback server to another loopback URL', async () => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    files.routes.set('/hop', (_req, res) => res.writeHead(301, { location: `http://[::1]:${files.port6}/target.csv` }).end());
    files.routes.set('/target.csv', csvRoute('email\nr@b.co\n'));
    const client = await newClient(service);
    const reply = await post(client, { email_list_id: client.defaultListId, url: `${files.url}/hop` });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ name: 'hop', size: 13, status: 'uploaded', mediatype: 'text', subtype: 'csv' });
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['[::ffff:169.254.169.254]', 'cloud metadata'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['[fe80::1]', 'link-local'],
  ])('refuses a redirect to %s (%s) before connecting', async (host, why) => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    const path = `/to-${why.replace(/\W/g, '')}`;
    files.routes.set(path, (_req, res) => res.writeHead(302, { location: `http://${host}/latest/meta-data/` }).end());
    const client = await newClient(service);
    const reply = await post<ErrorBody>(client, { email_list_id: client.defaultListId, url: `${files.url}${path}` });
    expect(reply.status).toBe(400);
    expect(reply.body.cause, why).toBe(`url: ${NOT_ALLOWED}`);
  });

  it('refuses non-http redirects, too many redirects, error answers, oversized and slow files', async () => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    const client = await newClient(service);
    const attempt = (path: string) => post<ErrorBody>(client, { email_list_id: client.defaultListId, url: `${files.url}${path}` });
    files.routes.set('/to-file', (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    expect((await attempt('/to-file')).body.cause).toMatch(/^url: only http and https/);
    files.routes.set('/loop', (_req, res) => res.writeHead(302, { location: '/loop' }).end());
    const before = files.hits.get('/loop') ?? 0;
    expect((await attempt('/loop')).body).toEqual({ status: 400, cause: `url: ${UNREACHABLE}` });
    expect((files.hits.get('/loop') ?? 0) - before).toBe(4);
    expect((await attempt('/missing.csv')).body.cause).toBe(`url: ${UNREACHABLE}`);
    process.env.IMPORT_MAX_BYTES = '10';
    files.routes.set('/big.csv', csvRoute('email\nsomeone@example.com\n'));
    expect((await attempt('/big.csv')).body.cause).toMatch(/more than 10 bytes \(IMPORT_MAX_BYTES\)/);
    files.routes.set('/big-chunked.csv', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('email\n');
      res.end('someone@example.com\n');
    });
    expect((await attempt('/big-chunked.csv')).body.cause).toMatch(/larger than 10 bytes \(IMPORT_MAX_BYTES\)/);
    delete process.env.IMPORT_MAX_BYTES;
    process.env.IMPORT_FETCH_TIMEOUT_MS = '300';
    files.routes.set('/slow.csv', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('email\n');
    });
    const slow = await attempt('/slow.csv');
    expect(slow.status).toBe(400);
    expect(slow.body.cause).toBe(`url: ${UNREACHABLE}`);
    expect((await request(`${service.url}/v1/files`, { token: client.token })).body).toEqual([]);
  });
});

describe('POST /v1/files: failures tell what to fix, not what the network looks like', () => {
  it('gives one cause for every unreachable destination (not found, refused port, silent port, 404) and one for every refused address', async () => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    process.env.IMPORT_CONNECT_TIMEOUT_MS = '300';
    const client = await newClient(service);
    const attempt = async (url: string) => (await post(client, { email_list_id: client.defaultListId, url })).body;
    const closed = await new Promise<number>((done) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as net.AddressInfo).port;
        probe.close(() => done(port));
      });
    });
    const silent = net.createServer(() => undefined).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const answers = [
        await attempt(`http://no-such-host.invalid/a.csv`),
        await attempt(`http://127.0.0.1:${closed}/a.csv`),
        await attempt(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/a.csv`),
        await attempt(`${files.url}/missing.csv`),
      ];
      expect(answers).toEqual(answers.map(() => ({ status: 400, cause: `url: ${UNREACHABLE}` })));
    } finally {
      silent.close();
      delete process.env.IMPORT_CONNECT_TIMEOUT_MS;
    }
    delete process.env.IMPORT_ALLOW_LOOPBACK;
    // A name that resolves to a private address: the same cause as an address literal, and the address is not told.
    for (const url of [`http://localhost:${files.port}/a.csv`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/a.csv']) {
      const body = await attempt(url);
      expect(body).toEqual({ status: 400, cause: `url: ${NOT_ALLOWED}` });
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|::1|169\.254|10\.0/);
    }
  });
});

describe('POST /v1/files: request checks', () => {
  it('answers 404 for an unknown list or a list of another client, 400 for bad bodies, 401 without a token', async () => {
    const a = await newClient(service);
    const b = await newClient(service);
    const listOfB = await createList(b.username, 'B only');
    expect((await post(a, { email_list_id: 99, url: 'https://example.com/a.csv' })).body).toEqual({ status: 404, cause: 'Unknown list 99' });
    expect((await post(a, { email_list_id: listOfB.id, url: 'https://example.com/a.csv' })).status).toBe(404);
    expect((await post<ErrorBody>(a, { email_list_id: a.defaultListId, url: 'ftp://example.com/a.csv' })).body.cause).toMatch(/^url: only http and https URLs/);
    expect((await post<ErrorBody>(a, { email_list_id: a.defaultListId })).body.cause).toBe('body.url: is required');
    expect((await post<ErrorBody>(a, { email_list_id: 'x', url: 'https://example.com/a.csv' })).body.cause).toMatch(/^body.email_list_id: /);
    expect((await post<ErrorBody>(a, { email_list_id: a.defaultListId, url: 'https://example.com/a.csv', update_list: 'yes' })).body.cause).toMatch(/^body.update_list: /);
    expect((await request(`${service.url}/v1/files`, { method: 'POST', body: { email_list_id: 1, url: 'https://example.com/a.csv' } })).status).toBe(401);
  });
});

describe('importing a file (fast-csv, spec 2.8 and §3)', () => {
  it('answers 201 with the imported file of spec 2.7, and the worker applies it: status, counts, first errors', async () => {
    const client = await newClient(service);
    const list = await createList(client.username, 'Imports');
    await applySubscribers(client.username, list.id, [
      { line: 1, email: 'kept-off@ex.com', subscribed: false, unsubscribedCause: 'READER' },
      { line: 2, email: 'change@ex.com', subscribed: true, guid: 'old' },
    ]);
    const csv = [
      '\ufeffEMAIL;Subscribed;unsubscribed_cause;GUID;data_City;open_tracking_consent',
      'New@Ex.com;;;;Paris;TRUE',
      'kept-off@ex.com;maybe;;;;',
      'change@ex.com;false;publisher;new-guid;;',
      'not-an-email;true;;;;',
      '',
      '"Quoted@ex.com";true;;G9;"Saint; Denis";false',
      ';true;;;;',
    ].join('\r\n');
    const { created, file } = await importCsv(client, list.id, csv, { path: '/lists/july.csv' });
    expect(created).toEqual({
      id: 1,
      name: 'july.csv',
      url: `${files.url}/lists/july.csv`,
      mediatype: 'text',
      subtype: 'csv',
      created_at: expect.stringMatching(ISO_MS) as string,
      size: Buffer.byteLength(csv),
      status: 'uploaded',
      email_list_id: list.id,
      update_list: false,
      updated_at: expect.stringMatching(ISO_MS) as string,
      finished_at: null,
      failure_cause: null,
      progress: { lines_read: 0, created: 0, subscribed: 0, unsubscribed: 0, data_changed: 0, errors: 0, unsubscribed_absent: 0, update_list_skipped: null },
      errors: [],
    });
    expect(file.status).toBe('done');
    expect(file.finished_at).toMatch(ISO_MS);
    expect(file.progress).toEqual({ lines_read: 6, created: 2, subscribed: 2, unsubscribed: 1, data_changed: 1, errors: 2, unsubscribed_absent: 0, update_list_skipped: null });
    expect(file.errors).toEqual([
      { line: 5, email: 'not-an-email', cause: expect.stringMatching(/email/) as string },
      { line: 8, email: null, cause: expect.stringMatching(/email/) as string },
    ]);
    expect(await getSubscriber(client.username, list.id, 'quoted@ex.com')).toMatchObject({
      subscribed: true,
      guid: 'G9',
      data: { data_City: 'Saint; Denis' },
      openTrackingConsent: false,
    });
    expect(await getSubscriber(client.username, list.id, 'new@ex.com')).toMatchObject({
      subscribed: true,
      guid: md5('new@ex.com'),
      data: { data_City: 'Paris' },
      openTrackingConsent: true,
    });
    expect(await getSubscriber(client.username, list.id, 'kept-off@ex.com')).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(await getSubscriber(client.username, list.id, 'change@ex.com')).toMatchObject({ subscribed: false, unsubscribedCause: 'PUBLISHER', guid: 'new-guid' });
    expect(await countSubscribers(client.username, list.id)).toEqual({ subscribed: 2, unsubscribed: 2, cause: { HARD_BOUNCE: 0, PUBLISHER: 1, READER: 1 } });
    expect((await eventLines(client.username, 'nl_unsubscribe')).map((l) => JSON.parse(l) as unknown)).toEqual([
      expect.objectContaining({ email: 'change@ex.com', cause: 'PUBLISHER', email_list_id: list.id }),
    ]);
    const listed = await request<ApiBody<'filesList'>>(`${service.url}/v1/files`, { token: client.token });
    expect(listed.body).toEqual([file]);
    const other = await newClient(service);
    expect((await getFile(other, created.id)).status).toBe(404);
    expect((await getFile(client, 999)).body).toEqual({ status: 404, cause: 'Unknown file 999' });
  });

  it('subscribes an address whose subscribed value is absent or invalid only when it is new', async () => {
    const client = await newClient(service);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'off@ex.com', subscribed: false }]);
    const { file } = await importCsv(client, client.defaultListId, 'email,subscribed\noff@ex.com,\nfresh@ex.com,yes\n');
    expect(file.progress).toMatchObject({ lines_read: 2, created: 1, subscribed: 1, unsubscribed: 0, errors: 0 });
    expect((await getSubscriber(client.username, client.defaultListId, 'off@ex.com'))?.subscribed).toBe(false);
    expect((await getSubscriber(client.username, client.defaultListId, 'fresh@ex.com'))?.subscribed).toBe(true);
  });

  it('fails an import without an email column, with a cause, and changes nothing', async () => {
    const client = await newClient(service);
    const { file } = await importCsv(client, client.defaultListId, 'mail;subscribed\na@b.co;true\n', { updateList: true });
    expect(file.status).toBe('failed');
    expect(file.failure_cause).toBe('the header line has no email column (columns: "mail", "subscribed")');
    expect(await countSubscribers(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('update_list: unsubscribes (PUBLISHER) the subscribed members absent from the file, keeps the rest', async () => {
    const client = await newClient(service);
    const listId = client.defaultListId;
    await applySubscribers(client.username, listId, [
      { line: 1, email: 'stay@ex.com', subscribed: true },
      { line: 2, email: 'gone@ex.com', subscribed: true },
      { line: 3, email: 'gone2@ex.com', subscribed: true },
      { line: 4, email: 'already-off@ex.com', subscribed: false },
      { line: 5, email: 'rejected-line@ex.com', subscribed: true },
    ]);
    const { file } = await importCsv(client, listId, 'email,unsubscribed_cause\nstay@ex.com,\nnew@ex.com,\nrejected-line@ex.com,NOBODY\n', { updateList: true });
    expect(file.status).toBe('done');
    expect(file.progress).toMatchObject({ lines_read: 3, created: 1, subscribed: 1, errors: 1, unsubscribed_absent: 2, update_list_skipped: null });
    const state = async (email: string) => (await getSubscriber(client.username, listId, email))?.subscribed;
    expect(await state('stay@ex.com')).toBe(true);
    expect(await state('new@ex.com')).toBe(true);
    expect(await state('rejected-line@ex.com')).toBe(true);
    expect(await getSubscriber(client.username, listId, 'gone@ex.com')).toMatchObject({ subscribed: false, unsubscribedCause: 'PUBLISHER' });
    expect(await getSubscriber(client.username, listId, 'already-off@ex.com')).toMatchObject({ subscribed: false, unsubscribedCause: 'READER' });
    expect(await countSubscribers(client.username, listId)).toEqual({ subscribed: 3, unsubscribed: 3, cause: { HARD_BOUNCE: 0, PUBLISHER: 2, READER: 1 } });
    const unsubscribed = (await eventLines(client.username, 'nl_unsubscribe')).map((l) => (JSON.parse(l) as { email: string }).email).sort();
    expect(unsubscribed).toEqual(['gone2@ex.com', 'gone@ex.com']);
  });

  it('update_list: never unsubscribes anyone after a failed import', async () => {
    const client = await newClient(service);
    const listId = client.defaultListId;
    await applySubscribers(client.username, listId, [{ line: 1, email: 'member@ex.com', subscribed: true }]);
    const { file } = await importCsv(client, listId, 'email\nfirst@ex.com\n"broken"x@ex.com\nlast@ex.com\n', { updateList: true });
    expect(file.status).toBe('failed');
    expect(file.failure_cause).toMatch(/^malformed CSV .*Parse Error/);
    expect((await getSubscriber(client.username, listId, 'member@ex.com'))?.subscribed).toBe(true);
    expect(file.progress.unsubscribed_absent).toBe(0);
  });

  it('does nothing more when S3 delivers the event again after the import finished', async () => {
    const client = await newClient(service);
    const { created } = await importCsv(client, client.defaultListId, 'email\nonce@ex.com\n');
    expect((await runWorker(client.username, created.id)).map((r) => r.outcome)).toEqual(['finished-before']);
    expect(await countSubscribers(client.username, client.defaultListId)).toMatchObject({ subscribed: 1 });
  });
});
