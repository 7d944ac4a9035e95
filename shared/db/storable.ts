/**
 * What the DynamoDB document client can store, checked before anything is written (a failing value would fail the
 * write after part of a batch applied): finite numbers within ±(2^53 − 1), 0 or at least 1e-130 in magnitude; non-empty
 * map keys; nesting up to MAX_STORED_DEPTH; well-formed UTF-16 strings.
 */
import * as v from 'valibot';

/** Largest magnitude of a stored number: Number.MAX_SAFE_INTEGER (2^53 − 1). */
export const MAX_STORED_NUMBER = Number.MAX_SAFE_INTEGER;
/** Smallest non-zero magnitude of a stored number (DynamoDB). */
export const MIN_STORED_FRACTION = 1e-130;
/** Deepest nesting of objects and arrays inside one stored value. */
export const MAX_STORED_DEPTH = 16;

/** The problem with a number, or undefined when DynamoDB can store it. */
export function numberProblem(n: number): string | undefined {
  if (!Number.isFinite(n)) return 'must be a finite number';
  const magnitude = Math.abs(n);
  if (magnitude > MAX_STORED_NUMBER) return `must be between -${MAX_STORED_NUMBER} and ${MAX_STORED_NUMBER}`;
  if (magnitude !== 0 && magnitude < MIN_STORED_FRACTION) return `must be 0 or at least ${MIN_STORED_FRACTION} in magnitude`;
  return undefined;
}

/** True for a string without lone surrogates (what UTF-8 storage can hold exactly). */
export function isWellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/**
 * The problem with a value (JSON-like: null, boolean, number, string, array,
 * plain object), prefixed by its path, or undefined when it can be stored.
 * Never recurses deeper than MAX_STORED_DEPTH + 1, whatever the input.
 */
export function storableProblem(value: unknown, path = '', depth = 0): string | undefined {
  const at = path ? `${path}: ` : '';
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') {
    const problem = numberProblem(value);
    return problem && `${at}${problem}`;
  }
  if (typeof value === 'string') return isWellFormed(value) ? undefined : `${at}must not contain unpaired surrogates (invalid Unicode)`;
  if (typeof value !== 'object') return `${at}must be a JSON value`;
  if (depth >= MAX_STORED_DEPTH) return `${at}is nested more than ${MAX_STORED_DEPTH} levels deep`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = storableProblem(value[i], `${path}[${i}]`, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key === '') return `${at}must not have an empty key`;
    if (!isWellFormed(key)) return `${at}keys must not contain unpaired surrogates (invalid Unicode)`;
    const problem = storableProblem(item, path ? `${path}.${key.slice(0, 64)}` : key.slice(0, 64), depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/** A JSON value DynamoDB can store (see the module notes); the issue names the path and the problem. */
export const StorableValueSchema = v.custom<unknown>((value) => storableProblem(value) === undefined, (issue) => storableProblem(issue.input) ?? 'cannot be stored');

/** A number DynamoDB can store: finite, |n| ≤ 2^53 − 1, 0 or |n| ≥ 1e-130. */
export const StorableNumberSchema = v.pipe(
  v.number(),
  v.check((n) => numberProblem(n) === undefined, (issue) => numberProblem(issue.input) ?? 'is not a storable number'),
);

/** An integer from `min` to `max` (both within the storable range); the message names the bounds. */
export const boundedInteger = (name: string, min: number, max: number) => {
  const message = `${name} must be an integer from ${min} to ${max}`;
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
};

/** Largest id of a list or an imported file (ten digits, as the path parameters accept). */
export const MAX_ID = 9_999_999_999;

/** UTF-8 size of a value's JSON. Call it after storableProblem: the depth is bounded then, so JSON.stringify cannot overflow the stack. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}
