import * as v from 'valibot';

/** The spec's error body (§7). */
export const ErrorSchema = v.object({ status: v.number(), cause: v.string() });

/** The deprecated API's error body (§4.10). */
export const InvalidRequestSchema = v.object({ status: v.literal('INVALID_REQUEST'), message: v.string() });

export const errorResponses = {
  400: { description: 'Invalid request; `cause` names the field and the problem', schema: ErrorSchema },
  401: { description: 'Missing, unknown or expired token', schema: ErrorSchema },
  415: { description: 'Content-Type is not one the route takes (media types match case-insensitively, parameters allowed)', schema: ErrorSchema },
} as const;

// Domain schemas import it from shared/params.ts (no domain module imports shared/http/); this re-export stays until
// recos/schemas.ts does too.
export { BoolParam } from '../params.js';
