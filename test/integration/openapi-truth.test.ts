/**
 * The answers a schema-driven client (Schemathesis) found the document wrong about: each request here goes through
 * `request`, which holds every answer to the OpenAPI document (test/helpers/api-contract.ts), and the document
 * itself says what the server refuses (id bounds, calendar days, http(s) URLs), so a generator does not send it as valid.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../shared/http/openapi.js';
import { newClient, request, useService } from '../helpers/service.js';

const service = useService();
type Param = { name: string; in: string; schema: object };
type Doc = { paths: Record<string, Record<string, { parameters?: Param[]; requestBody?: { content: Record<string, { schema: { properties?: Record<string, object> } }> }; responses: Record<string, { content?: Record<string, unknown> }> }>> };
const doc = openApiDocument('http://127.0.0.1') as unknown as Doc;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters!.find((p) => p.name === name)!.schema;
const accepts = (schema: object, value: unknown) => ajv.validate(schema, value);

describe('the OpenAPI document is what the server does', () => {
  it('documents the id bounds: a file or list id past 9,999,999,999 is outside the document, and its 400 is described', async () => {
    for (const [path, name] of [['/v1/files/{file_id}', 'file_id'], ['/v1/newsletters/lists/{list_id}/recommendations', 'list_id']] as const) {
      expect(param(path, 'get', name)).toMatchObject({ type: 'integer', minimum: 1, maximum: 9_999_999_999 });
    }
    expect(accepts(param('/v1/files/{file_id}', 'get', 'file_id'), 1_633_468_665_246)).toBe(false);
    const client = await newClient(service);
    const big = await request<{ cause: string }>(`${service.url}/v1/files/1633468665246`, { token: client.token });
    expect([big.status, big.body.cause]).toEqual([400, expect.stringContaining('file_id')]);
    expect((await request(`${service.url}/v1/files/9999999999`, { token: client.token })).status).toBe(404);
  });

  it('documents days as calendar days and URLs as http(s) URLs, which the server refuses otherwise', () => {
    const day = param('/v1/stats/events/daily', 'get', 'from');
    expect(['2026-11-29', '0000-00-00', '2026-13-01', ''].map((d) => accepts(day, d))).toEqual([true, false, false, false]);
    const eventDay = param('/v1/newsletters/events/{event_name}/{date}', 'get', 'date');
    expect(accepts(eventDay, '0000-00-00')).toBe(false);
    const importUrl = doc.paths['/v1/files'].post.requestBody!.content['application/json'].schema.properties!.url;
    expect(['https://x.example/a.csv', '0', '', 'ftp://x.example/a'].map((u) => accepts(importUrl, u))).toEqual([true, false, false, false]);
  });

  it('documents the emails of users/export and users/delete and a page_url by the rules the server holds them to', async () => {
    const exportEmail = param('/v1/users/export', 'get', 'email');
    const deleteEmail = (doc.paths['/v1/users/delete'].post.requestBody!.content['application/json'].schema as { items: { properties: Record<string, object> } }).items.properties.email;
    const emails = ['reader@example.com', 'First.Last+tag@sub.example.org', '', '0', 'a@b', 'a@b.12', 'a..b@example.com', '"q"@example.com', `${'x'.repeat(65)}@example.com`];
    const expected = [true, true, false, false, false, false, false, false, false];
    expect(emails.map((e) => accepts(exportEmail, e))).toEqual(expected);
    expect(emails.map((e) => accepts(deleteEmail, e))).toEqual(expected);
    const pageUrl = param('/v1/clients/{block_key}/users/{user_id}/recommendations', 'get', 'page_url');
    expect(['https://news.example/a', 'http://news.example/', '0', '', 'ftp://news.example/a', '/a'].map((u) => accepts(pageUrl, u))).toEqual([true, true, false, false, false, false]);
    // The server agrees on each side of the line.
    const client = await newClient(service);
    for (const [email, ok] of emails.map((e, i) => [e, expected[i]] as const)) {
      const exported = await request(`${service.url}/v1/users/export?email=${encodeURIComponent(email)}`, { token: client.token });
      expect(exported.status, email).toBe(ok ? 404 : 400);
      const deleted = await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email }] });
      expect(deleted.status, email).toBe(ok ? 200 : 400);
    }
  });

  it('documents block_key as required on newsletter picks, a job poll included, as the server holds it', async () => {
    const picks = doc.paths['/v1/newsletters/lists/{list_id}/recommendations'].get.parameters!.find((p) => p.name === 'block_key') as Param & { required: boolean };
    expect(picks.required).toBe(true);
    const client = await newClient(service);
    const reply = await request<{ cause: string }>(`${service.url}/v1/newsletters/lists/${client.defaultListId}/recommendations?job=AAAAAAAAAAAAAAAA`, { token: client.token });
    expect([reply.status, reply.body.cause]).toEqual([400, 'query.block_key: is required']);
  });

  it("describes the JSON 400 of a reader link POST whose token is too long to be one", async () => {
    const res = await request(`${service.url}/v1/readers/preferences/someone/${'a'.repeat(10)}/${'t'.repeat(700)}`, { method: 'POST', raw: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([res.status, res.headers.get('content-type')]).toEqual([400, expect.stringContaining('application/json')]);
  });

  it('describes a 431 (request line and headers too large) on every operation', () => {
    for (const [path, methods] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(methods)) expect(op.responses['431'], `${method} ${path}`).toBeDefined();
  });
});
