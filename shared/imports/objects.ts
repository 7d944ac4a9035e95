/** Object keys of imported files in IMPORTS_BUCKET. The import worker is triggered by objects created under UPLOADS_PREFIX. */
export const UPLOADS_PREFIX = 'uploads/';

/** The stored copy of an imported file. */
export const sourceKey = (clientId: string, fileId: number) => `${UPLOADS_PREFIX}${clientId}/${fileId}/source`;

/** An empty marker whose creation triggers the worker again to continue a paused import. */
export const resumeKey = (clientId: string, fileId: number, stamp = Date.now()) => `${UPLOADS_PREFIX}${clientId}/${fileId}/resume-${stamp}`;

/** The file an object under UPLOADS_PREFIX belongs to (keys as S3 events give them, URL-encoded). */
export function fileOfKey(rawKey: string): { clientId: string; fileId: number } | undefined {
  const key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
  const match = /^uploads\/([a-z0-9][a-z0-9_-]*)\/(\d{1,10})\/(source|resume-\d+)$/.exec(key);
  return match ? { clientId: match[1], fileId: Number(match[2]) } : undefined;
}
