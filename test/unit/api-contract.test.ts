import { describe, expect, it } from 'vitest';
import { checkResponse } from '../helpers/api-contract.js';

const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json; charset=utf-8', ...extra });
const base = 'http://127.0.0.1:9/v1/newsletters/lists/1/subscribers/count';

describe('the API contract check of the integration tests', () => {
  it('accepts a described response', () => {
    expect(() => checkResponse('GET', base, 200, json(), JSON.stringify({ subscribed: 1, unsubscribed: 0, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 } }))).not.toThrow();
  });

  it('refuses an undescribed status, a body off the schema, an undescribed header and an undescribed content type', () => {
    expect(() => checkResponse('GET', base, 418, json(), '{}')).toThrow(/is not a described status/);
    expect(() => checkResponse('GET', base, 200, json(), JSON.stringify({ subscribed: '1', unsubscribed: 0, cause: {} }))).toThrow(/body does not match/);
    expect(() => checkResponse('GET', base, 200, json(), JSON.stringify({ subscribed: 1.5, unsubscribed: 0, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 } }))).toThrow(/must be integer/);
    expect(() => checkResponse('GET', base, 200, json({ 'x-secret': '1' }), JSON.stringify({ subscribed: 1, unsubscribed: 0, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 } }))).toThrow(/undescribed header\(s\) x-secret/);
    expect(() => checkResponse('GET', base, 200, new Headers({ 'content-type': 'text/plain' }), 'x')).toThrow(/sent text\/plain/);
  });

  it('leaves paths that are no route alone', () => {
    expect(() => checkResponse('GET', 'http://127.0.0.1:9/demo/index.html', 200, new Headers({ 'content-type': 'text/html' }), '<p>')).not.toThrow();
  });
});
