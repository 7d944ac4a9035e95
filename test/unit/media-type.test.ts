import { describe, expect, it } from 'vitest';
import { isRetryableStorageFault } from '../../shared/db/client.js';
import { isFormType, isJsonType, parseMediaType } from '../../shared/http/media-type.js';

describe('media types (RFC 9110 §8.3.1)', () => {
  it.each([
    ['application/json', 'application/json', true],
    ['Application/Json', 'application/json', true],
    ['application/json ; charset=utf-8', 'application/json; charset=utf-8', true],
    ['APPLICATION/JSON;CHARSET=UTF-8', 'application/json; charset=UTF-8', true],
    ['application/json;', 'application/json', true],
    ['  application/vnd.api+json  ', 'application/vnd.api+json', true],
    ['application/jsonx', 'application/jsonx', false],
    ['application/json-patch', 'application/json-patch', false],
    ['text/plain', 'text/plain', false],
  ])('%j → %j (JSON %s)', (header, normalized, json) => {
    const parsed = parseMediaType(header);
    expect(parsed?.normalized).toBe(normalized);
    expect(isJsonType(parsed!.essence)).toBe(json);
  });

  it('reads forms in any case and refuses what is not a media type', () => {
    expect(isFormType(parseMediaType('Application/X-WWW-Form-Urlencoded ; Charset=UTF-8')!.essence)).toBe(true);
    for (const bad of [undefined, '', 'json', 'application/', '/json', 'application json', 'a/b/c']) expect(parseMediaType(bad)).toBeUndefined();
  });
});

describe('storage faults a retry can cure', () => {
  const fault = (fields: Record<string, unknown>) => Object.assign(new Error('x'), fields);
  it.each([
    [fault({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }), true],
    [fault({ name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } }), true],
    [fault({ name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }), true],
    [fault({ name: 'Whatever', $metadata: { httpStatusCode: 503 } }), true],
    [fault({ name: 'TimeoutError' }), true],
    [fault({ code: 'ECONNRESET' }), true],
    [fault({ name: 'UnprocessedError' }), true],
    [fault({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }] }), true],
    [fault({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ValidationError' }] }), false],
    [fault({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } }), false],
    [fault({ name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 400 } }), false],
    [fault({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }), false],
    [new Error('Number 1e+300 is greater than Number.MAX_SAFE_INTEGER.'), false],
    ['a string', false],
  ])('%o → %s', (err, retryable) => {
    expect(isRetryableStorageFault(err)).toBe(retryable);
  });
});
