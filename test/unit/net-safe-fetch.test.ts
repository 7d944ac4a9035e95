import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { safeFetch, UrlFetchError } from '../../shared/net/safe-fetch.js';

/** Answers `status` with an endless body; resolves `closed` when the client drops the connection. */
let server: http.Server;
let base: string;
const closed = new Map<string, Promise<void>>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/ok') return res.writeHead(200, { 'content-type': 'text/csv' }).end('email\na@x.com\n');
    const status = path === '/redirect' ? 302 : 500;
    res.writeHead(status, { location: '/ok', 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024, 'x')), 5);
    closed.set(path, new Promise((done) => res.once('close', () => (clearInterval(timer), done()))));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const options = { allowLoopback: true, maxBytes: 1024 * 1024, timeoutMs: 60_000, connectTimeoutMs: 10_000, maxRedirects: 3 };

it('drops the connection of a redirect instead of reading its (endless) body', async () => {
  const fetched = await safeFetch(`${base}/redirect`, options);
  expect(fetched.url.pathname).toBe('/ok');
  fetched.body.resume();
  await closed.get('/redirect');
});

it('drops the connection of a non-2xx answer instead of reading its (endless) body', async () => {
  await expect(safeFetch(`${base}/fail`, options)).rejects.toThrow(UrlFetchError);
  await closed.get('/fail');
});
