import { describe, expect, it } from 'vitest';
import { issueToken } from '../../shared/auth/tokens.js';
import { rotateApiKey } from '../../shared/clients/clients.js';
import { newClient, request, useService } from '../helpers/service.js';

const service = useService();

describe('GET /v1/token', () => {
  it('returns a token for a valid client name and API key, and the token opens protected routes', async () => {
    const client = await newClient(service);
    const reply = await request(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(client.apiKey)}`);
    expect(reply.status).toBe(200);
    expect(reply.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lists = await request(`${service.url}/v1/newsletters/lists`, { token: reply.body.token });
    expect(lists.status).toBe(200);
  });

  it('gives the same 401 cause for a wrong password and an unknown client', async () => {
    const client = await newClient(service);
    const wrongKey = await request(`${service.url}/v1/token?username=${client.username}&password=nope`);
    const unknown = await request(`${service.url}/v1/token?username=nobody-${Date.now()}&password=${encodeURIComponent(client.apiKey)}`);
    expect(wrongKey.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrongKey.body).toEqual({ status: 401, cause: 'Invalid username or password' });
    expect(unknown.body).toEqual(wrongKey.body);
  });

  it('answers 401, not 500, for a name too long to be a client name', async () => {
    const reply = await request(`${service.url}/v1/token?username=${'a'.repeat(3000)}&password=x`);
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ status: 401, cause: 'Invalid username or password' });
  });

  it('names the missing query parameter', async () => {
    const reply = await request(`${service.url}/v1/token?username=someone`);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: 'query.password: is required' });
  });

  it('stops accepting the old API key after a rotation', async () => {
    const client = await newClient(service);
    const newKey = await rotateApiKey(client.username);
    const old = await request(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(client.apiKey)}`);
    const fresh = await request(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(newKey)}`);
    expect(old.status).toBe(401);
    expect(fresh.status).toBe(200);
  });
});

describe('X-Service-Client-Token', () => {
  it('is checked before the body: no token and a bad body is a 401', async () => {
    const reply = await request(`${service.url}/v1/newsletters/lists/1/subscribers`, { method: 'POST', raw: '{not json', headers: { 'content-type': 'text/plain' } });
    expect(reply.status).toBe(401);
  });

  it('answers 401 JSON for a missing, unknown or expired token', async () => {
    const client = await newClient(service);
    const { token: expired } = await issueToken(client.username, client.apiKey, Date.now() - 3601_000);
    const missing = await request(`${service.url}/v1/newsletters/lists`);
    const unknown = await request(`${service.url}/v1/newsletters/lists`, { token: 'not-a-token' });
    const old = await request(`${service.url}/v1/newsletters/lists`, { token: expired });
    expect([missing.status, unknown.status, old.status]).toEqual([401, 401, 401]);
    expect(missing.body.cause).toBe('Missing X-Service-Client-Token header');
    expect(unknown.body.cause).toMatch(/^Unknown token/);
    expect(old.body.cause).toMatch(/^Token expired/);
  });
});
