/**
 * Signed recommendation ids: `recomm_id` is `<variant>.<answer>` and each redirect carries `rid=<recomm_id>.<tag>`,
 * an HMAC of block, variant, answer and article under the client's secret, so only an article the service showed in
 * that answer can be counted. Pure functions.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new recommendation id: `<variant>.<16 base64url characters>` (96 random bits). */
export function newRecommId(variant: string): string {
  return `${variant}.${randomBytes(12).toString('base64url')}`;
}

const tagOf = (secret: string, blockKey: string, recommId: string, guid: string) =>
  createHmac('sha256', secret).update(`rid\n${blockKey}\n${recommId}\n${guid}`, 'utf8').digest().subarray(0, 12).toString('base64url');

/** The `rid` of one redirect link of an answer: its `recomm_id` and the tag binding block and article to it. */
export function linkRid(secret: string, blockKey: string, recommId: string, guid: string): string {
  return `${recommId}.${tagOf(secret, blockKey, recommId, guid)}`;
}

const SIGNED_RID = /^([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{16})$/;

/** The variant and answer of a link's `rid` when the service signed it for this block and article; else undefined. */
export function verifyRid(secret: string | undefined, blockKey: string, guid: string, rid: string | undefined): { variant: string; recommId: string } | undefined {
  const m = rid === undefined || secret === undefined ? null : SIGNED_RID.exec(rid);
  if (!m) return undefined;
  const recommId = `${m[1]}.${m[2]}`;
  const expected = Buffer.from(tagOf(secret!, blockKey, recommId, guid), 'utf8');
  const given = Buffer.from(m[3], 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given) ? { variant: m[1], recommId } : undefined;
}

/**
 * One member's answer of a newsletter picks request: `newsletter.<16 characters>` derived from the request's id and
 * the member, so a run resumed from its checkpoint makes the same links, and each member's clicks count once.
 */
export function memberRecommId(secret: string, requestId: string, memberGuid: string): string {
  const [variant] = requestId.split('.');
  return `${variant}.${createHmac('sha256', secret).update(`member\n${requestId}\n${memberGuid}`, 'utf8').digest().subarray(0, 12).toString('base64url')}`;
}
