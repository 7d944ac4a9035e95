/**
 * UploadPartCopy for the s3rver emulator, which answers NotImplemented to
 * it: a part of a multipart upload copied from a byte range of a stored
 * object (the event files stitch a day from its hours this way in AWS). A
 * Koa middleware placed before s3rver's own routes; path-style requests
 * only, as the local stack sends them.
 */
import type { Readable } from 'node:stream';

/** The part of s3rver's filesystem store this middleware uses. */
export interface FilesystemStore {
  getObject(bucket: string, key: string, range?: { start: number; end: number }): Promise<{ content: Readable | null; metadata: Record<string, string> } | null>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: Readable): Promise<{ md5: string }>;
}

/** The part of Koa's context this middleware uses. */
export interface Ctx {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

const error = (ctx: Ctx, status: number, code: string, message: string) => {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
};

/** The middleware, over the emulator's filesystem store. */
export function uploadPartCopy(store: FilesystemStore) {
  return async (ctx: Ctx, next: () => Promise<void>) => {
    const source = ctx.headers['x-amz-copy-source'];
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'PUT' || typeof source !== 'string' || typeof uploadId !== 'string') return next();
    const [bucket] = ctx.path.slice(1).split('/');
    const [srcBucket, ...srcKey] = source.replace(/^\//, '').split('/').map(decodeURIComponent);
    const range = /^bytes=(\d+)-(\d+)$/.exec(String(ctx.headers['x-amz-copy-source-range'] ?? ''));
    const object = await store.getObject(srcBucket, srcKey.join('/'), range ? { start: Number(range[1]), end: Number(range[2]) } : undefined);
    if (!object?.content) return error(ctx, 404, 'NoSuchKey', 'The specified key does not exist.');
    const { md5 } = await store.putPart(decodeURIComponent(bucket), uploadId, Number(ctx.query.partNumber), object.content);
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<CopyPartResult><LastModified>${new Date().toISOString()}</LastModified><ETag>"${md5}"</ETag></CopyPartResult>`;
  };
}
