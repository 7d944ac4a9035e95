/**
 * Signed reader ids (per client): a guessable reader id would open that reader's history, so with signing on a
 * non-anonymous id needs `sig` = hex HMAC-SHA256(user id, client's secret) from the publisher's back end.
 * Anonymous ids (`anon-` + 128 random bits) cannot be guessed and need none.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Client } from '../clients/clients.js';
import { ReaderSignatureError } from './errors.js';

/** The shape of the browser library's anonymous ids: `anon-` and 32 hex digits (128 random bits). */
export const ANONYMOUS_ID = /^anon-[0-9a-f]{32}$/;

/** The signature of a reader id under a signing secret: lowercase hex HMAC-SHA256. */
export function readerSignature(secret: string, userId: string): string {
  return createHmac('sha256', secret).update(userId, 'utf8').digest('hex');
}

/**
 * Refuses (403) a reader id that the client requires to be signed and whose
 * `sig` is missing or wrong. `where` names the parameter in the cause
 * (`query.sig`, `body.sig`).
 */
export function checkReaderId(client: Pick<Client, 'signedIds' | 'signingSecret'> | undefined, userId: string, sig: string | undefined, where: string): void {
  if (!client?.signedIds || ANONYMOUS_ID.test(userId)) return;
  if (!sig) throw new ReaderSignatureError(where, `${where}: this publisher requires signed reader ids; ${where} is missing`);
  const expected = Buffer.from(readerSignature(client.signingSecret ?? '', userId), 'utf8');
  const given = Buffer.from(sig, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ReaderSignatureError(where, `${where}: not the signature of this reader id`);
}
