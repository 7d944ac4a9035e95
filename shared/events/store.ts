import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  NoSuchKey,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { config } from '../config.js';
import { s3 } from '../s3.js';

/** An object as listed: key, size in bytes, ETag. */
export interface StoredObject {
  key: string;
  size: number;
  etag: string;
}

/** The storage the event files need; S3 in AWS and locally, an in-memory one in unit tests. */
export interface EventStore {
  /** Every object under a prefix, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** The next path segments under a prefix (`raw/` → client ids). */
  listChildren(prefix: string): Promise<string[]>;
  /** Streams an object's bytes. */
  read(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Size and user metadata, or undefined when absent. */
  head(key: string): Promise<{ size: number; metadata: Record<string, string> } | undefined>;
  /** Writes a stream as one object (multipart when large), replacing any object at the key. */
  write(key: string, body: Readable, o: { contentType: string; metadata?: Record<string, string> }): Promise<void>;
  remove(keys: string[]): Promise<void>;
  /** A short-lived download URL. */
  presign(key: string, o: { filename: string; contentType: string; expiresIn: number }): Promise<string>;
}

/** Part size of streamed uploads; S3s minimum; with `queueSize` 2 about 3 parts are in memory. */
const PART_SIZE = 5 * 1024 * 1024;

/** Joins a stream's many small chunks (one per CSV row) into fewer 256 KB buffers before the upload buffers them. */
async function* coalesce(body: Readable, size = 256 * 1024): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    parts.push(buffer);
    length += buffer.length;
    if (length >= size) {
      yield Buffer.concat(parts, length);
      parts = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(parts, length);
}

const isMissing = (err: unknown) =>
  err instanceof NotFound || err instanceof NoSuchKey || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

/** The events bucket (EVENTS_BUCKET). */
export function s3EventStore(bucketName?: string): EventStore {
  const bucket = () => bucketName ?? config.eventsBucket;
  const store: EventStore = {
    async list(prefix) {
      const out: StoredObject[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
        for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag ?? '' });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async listChildren(prefix) {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
        for (const p of page.CommonPrefixes ?? []) out.push(p.Prefix!.slice(prefix.length).replace(/\/$/, ''));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      if (out.length > 0) return out.sort();
      // The s3rver emulator reports no common prefix for keys nested deeper than
      // one level; an empty answer is confirmed by a plain listing (in S3 it is
      // empty too, so this costs one request when there is nothing).
      const children = new Set<string>();
      for (const o of await store.list(prefix)) {
        const rest = o.key.slice(prefix.length);
        if (rest.indexOf('/') > 0) children.add(rest.slice(0, rest.indexOf('/')));
      }
      return [...children].sort();
    },
    async read(key) {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
      return out.Body as Readable;
    },
    async head(key) {
      try {
        const out = await s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
        return { size: out.ContentLength ?? 0, metadata: out.Metadata ?? {} };
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    },
    async write(key, body, { contentType, metadata }) {
      const upload = new Upload({
        client: s3,
        params: { Bucket: bucket(), Key: key, Body: Readable.from(coalesce(body)), ContentType: contentType, Metadata: metadata },
        partSize: PART_SIZE,
        queueSize: 2,
        leavePartsOnError: false,
      });
      await upload.done();
    },
    async remove(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        if (batch.length === 0) continue;
        await s3.send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      }
    },
    presign(key, { filename, contentType, expiresIn }) {
      return getSignedUrl(
        s3,
        new GetObjectCommand({
          Bucket: bucket(),
          Key: key,
          ResponseContentType: contentType,
          ResponseContentDisposition: `attachment; filename="${filename}"`,
        }),
        { expiresIn },
      );
    },
  };
  return store;
}
