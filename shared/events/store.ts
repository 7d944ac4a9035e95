import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { config } from '../config.js';
import { s3 } from '../s3.js';
import { MIN_PART_BYTES, planConcat, type ConcatPiece, type PartSegment } from './concat-plan.js';
import { mapLimit } from './map-limit.js';

/** An object as listed: key, size in bytes, ETag, and when it was written (ms since the epoch, where the store says). */
export interface StoredObject {
  key: string;
  size: number;
  etag: string;
  modified?: number;
}

/** The storage the event files need; S3 in AWS and locally, an in-memory one in unit tests. */
export interface EventStore {
  /** Every object under a prefix, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** The next path segments under a prefix (`raw/` → client ids). */
  listChildren(prefix: string): Promise<string[]>;
  /** Streams an object's bytes; with a range, bytes `start` (inclusive) to `end` (exclusive). */
  read(key: string, range?: { start: number; end: number }): Promise<AsyncIterable<Uint8Array>>;
  /** Size and user metadata, or undefined when absent. */
  head(key: string): Promise<{ size: number; metadata: Record<string, string> } | undefined>;
  /** Writes a stream as one object (multipart when large), replacing any object at the key. */
  write(key: string, body: Readable, o: { contentType: string; metadata?: Record<string, string> }): Promise<void>;
  /**
   * Writes one object made of the pieces in order (strings and whole stored
   * objects), replacing any object at the key. Large stored objects are
   * copied inside the store, not read through the caller.
   */
  concat(key: string, pieces: ConcatPiece[], o: { contentType: string; metadata?: Record<string, string> }): Promise<void>;
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

/** A copy source header value: the bucket and the key, URL-encoded segment by segment. */
const copySource = (bucket: string, key: string) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/** Parts of a concatenation sent at once (an uploaded part holds up to 10 MiB in memory). */
const CONCAT_CONCURRENCY = 4;

/**
 * The events bucket (EVENTS_BUCKET). `minPartBytes`: the smallest part of
 * a concatenation (S3's 5 MiB; tests lower it to exercise copies on small
 * files).
 */
export function s3EventStore(bucketName?: string, { minPartBytes = MIN_PART_BYTES }: { minPartBytes?: number } = {}): EventStore {
  const bucket = () => bucketName ?? config.eventsBucket;
  const bytesOf = async (segments: PartSegment[]): Promise<Buffer> => {
    const buffers: Buffer[] = [];
    for (const segment of segments) {
      if ('text' in segment) buffers.push(Buffer.from(segment.text));
      else for await (const chunk of await store.read(segment.key, segment)) buffers.push(Buffer.from(chunk));
    }
    return Buffer.concat(buffers);
  };
  const store: EventStore = {
    async list(prefix) {
      const out: StoredObject[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
        for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag ?? '', modified: o.LastModified?.getTime() });
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
    async read(key, range) {
      if (range && range.end <= range.start) return Readable.from([]);
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket(), Key: key, Range: range && `bytes=${range.start}-${range.end - 1}` }));
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
    async concat(key, pieces, { contentType, metadata }) {
      const parts = planConcat(pieces, { minPart: minPartBytes });
      const only = parts.length === 1 ? parts[0] : undefined;
      if (parts.length === 0 || (only && 'segments' in only)) {
        const body = only && 'segments' in only ? await bytesOf(only.segments) : Buffer.alloc(0);
        await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: contentType, Metadata: metadata }));
        return;
      }
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: key, ContentType: contentType, Metadata: metadata }));
      try {
        const etags = await mapLimit(parts, CONCAT_CONCURRENCY, async (part, i) => {
          const target = { Bucket: bucket(), Key: key, UploadId, PartNumber: i + 1 };
          if ('copy' in part) {
            const { key: source, start, end } = part.copy;
            const out = await s3.send(new UploadPartCopyCommand({ ...target, CopySource: copySource(bucket(), source), CopySourceRange: `bytes=${start}-${end - 1}` }));
            return out.CopyPartResult!.ETag!;
          }
          return (await s3.send(new UploadPartCommand({ ...target, Body: await bytesOf(part.segments) }))).ETag!;
        });
        await s3.send(
          new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: key, UploadId, MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) } }),
        );
      } catch (err) {
        await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket(), Key: key, UploadId })).catch(() => undefined);
        throw err;
      }
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
