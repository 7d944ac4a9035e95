/**
 * The `data_*` fields of a subscriber (spec 2.4, 2.8, 4.1): one rule for the
 * list API, the deprecated API, the CSV import and the opt-in form. Pure.
 */
import { jsonBytes, storableProblem } from '../db/storable.js';

/** Largest `data_*` payload one request line may carry (UTF-8 bytes of its JSON), well under DynamoDB's 400 KB item limit. */
export const MAX_DATA_BYTES = 10_240;
/** Largest merged `data_*` payload stored for one subscriber (fields add up across requests). */
export const MAX_STORED_DATA_BYTES = 65_536;

/** A data field name: `data_` and 1 to 64 of `A-Za-z0-9_.-`. */
export const DATA_NAME = /^data_[A-Za-z0-9_.-]{1,64}$/;

/**
 * The `data_*` fields of an object, checked: valid names, values DynamoDB
 * can store (shared/db/storable.ts: number range, nesting, empty keys),
 * `scalars` (the opt-in form) only strings, numbers, booleans or null, and
 * at most MAX_DATA_BYTES of JSON in all. A string on failure (the problem).
 */
export function dataFields(input: Record<string, unknown>, { scalars = false }: { scalars?: boolean } = {}): Record<string, unknown> | string {
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (!name.startsWith('data_')) continue;
    if (!DATA_NAME.test(name)) return `${name.slice(0, 80)} is not a valid data field name`;
    if (scalars && value !== null && !['string', 'number', 'boolean'].includes(typeof value)) return `${name}: must be a string, number, boolean or null`;
    const problem = storableProblem(value, name);
    if (problem) return problem;
    data[name] = value;
  }
  if (jsonBytes(data) > MAX_DATA_BYTES) return `data_* fields are larger than ${MAX_DATA_BYTES} bytes`;
  return data;
}
