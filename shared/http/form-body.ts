/**
 * Small form bodies read by the function itself (the reader pages), urlencoded or multipart/form-data
 * (RFC 8058 allows both for one-click): fields by name, every value of a
 * repeated field. Bounded: at most MAX_FORM_BYTES, parsed with indexOf and
 * split (linear), no regular expression over the body.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseMediaType } from './media-type.js';

export const MAX_FORM_BYTES = 16_384;

export type FormFields = Map<string, string[]>;

function add(fields: FormFields, name: string, value: string): void {
  const values = fields.get(name) ?? [];
  values.push(value);
  fields.set(name, values);
}

/** The fields of a request's body; undefined when the body is too large or not a form (a multipart without boundary, say). */
export function formFields(event: Pick<APIGatewayProxyEventV2, 'body' | 'headers'> & { isBase64Encoded?: boolean }): FormFields | undefined {
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (raw.length > MAX_FORM_BYTES) return undefined;
  const type = parseMediaType(event.headers?.['content-type']);
  const fields: FormFields = new Map();
  if (type?.essence === 'multipart/form-data') {
    const boundary = /(?:^|;)\s*boundary="?([^";]{1,70})"?/i.exec(event.headers?.['content-type'] ?? '')?.[1];
    if (!boundary) return undefined;
    for (const part of raw.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break;
      const split = part.indexOf('\r\n\r\n');
      if (split < 0) continue;
      const head = part.slice(0, split);
      const name = /content-disposition:[^\r\n]*;\s*name="([^"\r\n]*)"/i.exec(head)?.[1];
      if (name !== undefined) add(fields, name, part.slice(split + 4).replace(/\r\n$/, ''));
    }
    return fields;
  }
  // RFC 8058's two types only: a text/plain (or untyped) body is not a form.
  if (type?.essence !== 'application/x-www-form-urlencoded') return undefined;
  for (const [name, value] of new URLSearchParams(raw)) add(fields, name, value);
  return fields;
}
