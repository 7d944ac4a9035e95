/**
 * POST /v1/files (spec 4.3): checks the list and the URL, downloads the file
 * under the safe-fetch rules straight into IMPORTS_BUCKET (streamed, size
 * capped), records the imported file as `uploaded` and returns it. The
 * worker, triggered by the stored object, does the rest.
 */
import { Upload } from '@aws-sdk/lib-storage';
import { pipeline, Transform } from 'node:stream';
import { config } from '../config.js';
import { getList, nextId } from '../lists/lists.js';
import { checkUrl, safeFetch, UNREACHABLE, UrlFetchError, type SafeFetchOptions } from '../net/safe-fetch.js';
import { logger } from '../observability/index.js';
import { s3 } from '../s3.js';
import { putFile, toImportedFile, emptyProgress, type ImportedFile } from './files.js';
import { sourceKey } from './objects.js';

export interface ImportRequest {
  email_list_id: number;
  url: string;
  update_list?: boolean;
}

/** The safe-fetch settings from configuration (docs/operations.md: IMPORT_*). */
export function fetchOptions(): SafeFetchOptions {
  return {
    allowLoopback: config.importAllowLoopback,
    maxBytes: config.importMaxBytes,
    timeoutMs: config.importFetchTimeoutMs,
    connectTimeoutMs: config.importConnectTimeoutMs,
    maxRedirects: config.importMaxRedirects,
  };
}

const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown', 'application/download', 'application/force-download']);

/**
 * The media type of a downloaded file: the answer's Content-Type when it is
 * specific; otherwise sniffed from the first bytes (NUL bytes: binary;
 * text with `,` or `;` on the first line, or a .csv name: text/csv; other
 * text: text/plain).
 */
export function detectMediaType(contentType: string | undefined, head: Buffer, name: string): { mediatype: string; subtype: string } {
  const declared = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const parts = /^([a-z0-9!#$&^_.+-]+)\/([a-z0-9!#$&^_.+-]+)$/.exec(declared);
  if (parts && !GENERIC_TYPES.has(declared)) return { mediatype: parts[1], subtype: parts[2] };
  if (head.includes(0)) return { mediatype: 'application', subtype: 'octet-stream' };
  const firstLine = head.toString('utf8').split('\n')[0];
  if (/\.csv$/i.test(name) || /[,;]/.test(firstLine)) return { mediatype: 'text', subtype: 'csv' };
  return { mediatype: 'text', subtype: 'plain' };
}

/** The file name: the last segment of the URL's path, else `file-<id>`. */
export function fileName(url: URL, fileId: number): string {
  const last = url.pathname.split('/').filter(Boolean).pop();
  let name = last ?? '';
  try {
    name = decodeURIComponent(name);
  } catch {
    // keeps the encoded form
  }
  return name.slice(0, 255) || `file-${fileId}`;
}

/** Counts the bytes that pass and keeps the first 1 KiB for media type detection. */
function meter() {
  const state = { size: 0, head: Buffer.alloc(0) };
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      state.size += chunk.length;
      if (state.head.length < 1024) state.head = Buffer.concat([state.head, chunk.subarray(0, 1024 - state.head.length)]);
      done(null, chunk);
    },
  });
  return { stream, state };
}

/** Logs what the caller is not told (what the address resolved to, what answered), then hands the error on. */
function withLog(err: UrlFetchError): UrlFetchError {
  if (err.detail) logger.warn('import URL not fetched', { cause: err.message, detail: err.detail });
  return err;
}

/** Runs a fetch step, logging the detail of a UrlFetchError it throws. */
async function logged<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw err instanceof UrlFetchError ? withLog(err) : err;
  }
}

/** Downloads and stores the file, records it as uploaded, and returns the imported file (spec 2.7). */
export async function importFromUrl(clientId: string, input: ImportRequest): Promise<ImportedFile> {
  await getList(clientId, input.email_list_id);
  const options = fetchOptions();
  const requested = await logged(() => checkUrl(input.url, options));
  const fetched = await logged(() => safeFetch(input.url, options));
  const { stream, state } = meter();
  let bodyError: unknown;
  // Wired before any other await: the body flows (and may fail) from now on.
  pipeline(fetched.body, stream, (err) => {
    if (err) bodyError = err;
  });
  const fileId = await nextId(clientId, 'file');
  const objectKey = sourceKey(clientId, fileId);
  const upload = new Upload({
    client: s3,
    params: { Bucket: config.importsBucket, Key: objectKey, Body: stream, ContentType: fetched.contentType ?? 'application/octet-stream' },
    partSize: 8 * 1024 * 1024,
    queueSize: 2,
  });
  try {
    await upload.done();
  } catch (err) {
    if (bodyError instanceof UrlFetchError) throw withLog(bodyError);
    if (bodyError) throw withLog(new UrlFetchError(UNREACHABLE, `download interrupted: ${(bodyError as Error).message}`));
    throw err;
  }
  if (bodyError instanceof UrlFetchError) throw withLog(bodyError);
  const name = fileName(requested, fileId);
  const now = new Date().toISOString();
  const file = {
    clientId,
    id: fileId,
    name,
    url: input.url,
    ...detectMediaType(fetched.contentType, state.head, name),
    createdAt: now,
    updatedAt: now,
    size: state.size,
    status: 'uploaded' as const,
    listId: input.email_list_id,
    updateList: input.update_list ?? false,
    objectKey,
    progress: emptyProgress(),
  };
  await putFile(file);
  return toImportedFile(file);
}
