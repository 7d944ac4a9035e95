/**
 * Fetches a user-given URL without reaching this machine, the private network or cloud metadata: http(s) only, every
 * address checked at connect time and on each redirect hop, with redirect, timeout and size caps.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { parseIp, refusal } from './address.js';
import { UrlFetchError } from './errors.js';

export { UrlFetchError } from './errors.js';

/** The one cause of every refused destination (private, loopback, metadata… addresses, before or after DNS, on any hop). */
export const NOT_ALLOWED = 'the address is not allowed: only public http(s) addresses can be imported';
/** The one cause of every destination that did not give the file: not found, refused, reset, silent, non-2xx, redirect loops, timeouts. */
export const UNREACHABLE = 'the file could not be fetched: check that the URL is public and answers the file (2xx) within the time limit';

const refused = (detail: string) => new UrlFetchError(NOT_ALLOWED, detail);
const unreachable = (detail: string) => new UrlFetchError(UNREACHABLE, detail);

export interface SafeFetchOptions {
  /** Lets loopback addresses through (local development and tests only). */
  allowLoopback: boolean;
  maxBytes: number;
  /** From the first request to the last byte of the body. */
  timeoutMs: number;
  /** To connect and receive the response headers, per hop. */
  connectTimeoutMs: number;
  maxRedirects: number;
  /** Names the size limit in causes (default `IMPORT_MAX_BYTES`). */
  sizeLimitName?: string;
  /** Request headers added to (or replacing) the defaults, e.g. `accept` or the conditional If-None-Match / If-Modified-Since. */
  headers?: Record<string, string>;
  /** GET unless told (a webhook delivery POSTs `body`). */
  method?: 'GET' | 'POST';
  body?: string;
}

export interface FetchedFile {
  /** The URL that answered, after redirects. */
  url: URL;
  /** 2xx, or 304 (Not Modified: an empty body) for a conditional request. */
  status: number;
  /** Validators of the answer, for the next conditional request. */
  etag?: string;
  lastModified?: string;
  contentType?: string;
  contentLength?: number;
  /** The body; fails with a UrlFetchError past maxBytes or the total timeout. */
  body: Readable;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function refusedDetail(host: string, address: string, why: string): string {
  const shown = host.replace(/^\[|\]$/g, '') === address ? address : `${host} (${address})`;
  return `refused: ${shown} is a ${why} address`;
}

/** Checks that the URL is http(s) and, when its host is an IP literal, that the address may be reached. */
export function checkUrl(raw: string | URL, { allowLoopback }: Pick<SafeFetchOptions, 'allowLoopback'>): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new UrlFetchError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlFetchError(`only http and https URLs can be imported, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw new UrlFetchError('URLs with credentials are not accepted');
  const literal = parseIp(url.hostname);
  if (literal) {
    const why = refusal(literal.toString(), { allowLoopback });
    if (why) throw refused(refusedDetail(url.hostname, literal.toString(), why));
  }
  return url;
}

/** A `lookup` that resolves every address of the name and fails when any of them may not be reached. */
export function guardedLookup(allowLoopback: boolean): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      for (const { address } of addresses) {
        const why = refusal(address, { allowLoopback });
        if (why) return callback(refused(refusedDetail(hostname, address, why)));
      }
      if (addresses.length === 0) return callback(unreachable(`host ${hostname} has no address`));
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

function describeNetworkError(err: NodeJS.ErrnoException, url: URL): UrlFetchError {
  if (err instanceof UrlFetchError) return err;
  return unreachable(`${url.host}: ${err.code ?? err.message}`);
}

function requestOnce(url: URL, o: SafeFetchOptions, deadline: number): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(url, {
      method: o.method ?? 'GET',
      agent: false,
      lookup: guardedLookup(o.allowLoopback),
      headers: { 'user-agent': 'newsletter-service-import/1', accept: 'text/csv, text/plain;q=0.9, */*;q=0.5', ...o.headers, 'accept-encoding': 'identity' },
    });
    const wait = Math.max(0, Math.min(o.connectTimeoutMs, deadline - Date.now()));
    const timer = setTimeout(() => req.destroy(unreachable(`no answer from ${url.host} within ${wait} ms`)), wait);
    req.on('socket', (socket) => {
      socket.once('connect', () => {
        // The address actually connected to, whatever resolved it.
        const peer = socket.remoteAddress ?? '';
        const why = refusal(peer, { allowLoopback: o.allowLoopback });
        if (why) req.destroy(refused(refusedDetail(url.hostname, peer, why)));
      });
    });
    req.once('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(describeNetworkError(err, url));
    });
    req.end(o.body);
  });
}

/** Counts bytes and fails past the limit. */
function sizeLimit(maxBytes: number, limitName: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes) return done(new UrlFetchError(`file larger than ${maxBytes} bytes (${limitName})`));
      done(null, chunk);
    },
  });
}

/**
 * GETs (or POSTs `body` to) the URL under the safety rules; resolves once a 2xx answer's headers
 * arrived, with its body as a stream (or on a 304 to a conditional request). Every refusal or failure is a
 * UrlFetchError (400) with a cause.
 */
export async function safeFetch(raw: string, o: SafeFetchOptions): Promise<FetchedFile> {
  const deadline = Date.now() + o.timeoutMs;
  let url = checkUrl(raw, o);
  for (let hop = 0; ; hop++) {
    const res = await requestOnce(url, o, deadline);
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status) && res.headers.location) {
      res.destroy();
      if (hop >= o.maxRedirects) throw unreachable(`more than ${o.maxRedirects} redirects`);
      let next: URL;
      try {
        next = new URL(res.headers.location, url);
      } catch {
        throw unreachable(`redirect to an invalid URL from ${url.host}`);
      }
      url = checkUrl(next, o);
      continue;
    }
    const validators = { etag: res.headers.etag, lastModified: res.headers['last-modified'] };
    const conditional = Object.keys(o.headers ?? {}).some((name) => /^if-(none-match|modified-since)$/i.test(name));
    if (status === 304 && conditional) {
      res.destroy();
      return { url, status, ...validators, body: Readable.from([]) };
    }
    if (status < 200 || status > 299) {
      res.destroy();
      throw unreachable(`${url.host} answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`);
    }
    const contentLength = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
    if (contentLength !== undefined && contentLength > o.maxBytes) {
      res.destroy();
      throw new UrlFetchError(`file is ${contentLength} bytes, more than ${o.maxBytes} bytes (${o.sizeLimitName ?? 'IMPORT_MAX_BYTES'})`);
    }
    const body = sizeLimit(o.maxBytes, o.sizeLimitName ?? 'IMPORT_MAX_BYTES');
    const timer = setTimeout(() => body.destroy(unreachable(`download not complete within ${o.timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
    res.once('error', (err) => body.destroy(describeNetworkError(err, url)));
    res.pipe(body);
    body.once('close', () => {
      clearTimeout(timer);
      res.destroy();
    });
    return { url, status, ...validators, contentType: res.headers['content-type'], contentLength, body };
  }
}
