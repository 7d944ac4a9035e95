import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../../shared/ratelimit/limits.js';
import { issueToken } from '../../shared/auth/tokens.js';
import { rotateApiKey } from '../../shared/clients/clients.js';
import { newClient, request, useService, type ApiBody, type ErrorBody } from '../helpers/service.js';

const service = useService();

describe('GET /v1/token', () => {
  it('returns a token for a valid client name and API key, and the token opens protected routes', async () => {
    const client = await newClient(service);
    const reply = await request<ApiBody<'tokenGet'>>(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(client.apiKey)}`);
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

  it('stops accepting the old API key and every token issued with it after a rotation', async () => {
    const client = await newClient(service);
    expect((await request(`${service.url}/v1/newsletters/lists`, { token: client.token })).status).toBe(200);
    const newKey = await rotateApiKey(client.username);
    const revoked = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { token: client.token });
    expect(revoked.status).toBe(401);
    expect(revoked.body.cause).toMatch(/^Token revoked/);
    const old = await request(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(client.apiKey)}`);
    const fresh = await request<ApiBody<'tokenGet'>>(`${service.url}/v1/token?username=${client.username}&password=${encodeURIComponent(newKey)}`);
    expect(old.status).toBe(401);
    expect(fresh.status).toBe(200);
    expect((await request(`${service.url}/v1/newsletters/lists`, { token: fresh.body.token })).status).toBe(200);
  });
});

/** GET /v1/token from a chosen loopback address (the gateway takes the source IP from the socket, as API Gateway does). */
function tokenFrom(from: string, url: string): Promise<{ status: number; retryAfter?: string; body: unknown }> {
  return new Promise((done, fail) => {
    http
      .get(url, { localAddress: from }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => done({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: JSON.parse(text) as unknown }));
      })
      .on('error', fail);
  });
}

describe('GET /v1/token resists guessing', () => {
  const url = (name: string, password: string) => `${service.url}/v1/token?username=${name}&password=${encodeURIComponent(password)}`;
  const addr = () => `127.${Math.floor(Math.random() * 200) + 20}.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;

  it(`gives 429 with Retry-After after ${LOGIN_LIMITS.perNameAndIp} failures for one name from one address, before any key check; other addresses are not locked out`, async () => {
    const client = await newClient(service);
    const attacker = addr();
    for (let i = 0; i < LOGIN_LIMITS.perNameAndIp; i++) expect((await tokenFrom(attacker, url(client.username, `guess-${i}`))).status).toBe(401);
    const blocked = await tokenFrom(attacker, url(client.username, 'guess-x'));
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ status: 429, cause: expect.stringMatching(/^Too many failed logins from this address; retry in \d+ s$/) as string });
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    // Even the right key is refused from there now: the check comes before the key is looked at.
    expect((await tokenFrom(attacker, url(client.username, client.apiKey))).status).toBe(429);
    // The publisher, elsewhere, is not locked out.
    expect((await tokenFrom(addr(), url(client.username, client.apiKey))).status).toBe(200);
  });

  it(`counts only failures, and limits one address to ${LOGIN_LIMITS.perIp} failures whatever the names`, async () => {
    const client = await newClient(service);
    const from = addr();
    // Successes do not count.
    for (let i = 0; i < LOGIN_LIMITS.perNameAndIp + 2; i++) expect((await tokenFrom(from, url(client.username, client.apiKey))).status).toBe(200);
    const sprayer = addr();
    for (let i = 0; i < LOGIN_LIMITS.perIp; i++) expect((await tokenFrom(sprayer, url(`name-${i}-${Date.now()}`, 'x'))).status).toBe(401);
    expect((await tokenFrom(sprayer, url(`another-${Date.now()}`, 'x'))).status).toBe(429);
    expect((await tokenFrom(sprayer, url(client.username, client.apiKey))).status).toBe(429);
    expect((await tokenFrom(from, url(client.username, client.apiKey))).status).toBe(200);
  });
});

describe('X-Service-Client-Token', () => {
  it('is checked before the body: no token and a bad body is a 401', async () => {
    const reply = await request(`${service.url}/v1/newsletters/lists/1/subscribers`, { method: 'POST', raw: '{not json', headers: { 'content-type': 'text/plain' } });
    expect(reply.status).toBe(401);
  });

  it('answers 401 JSON for a missing, unknown or expired token', async () => {
    const client = await newClient(service);
    const { token: expired } = await issueToken(client.username, client.apiKey, '192.0.2.1', Date.now() - 3601_000);
    const missing = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`);
    const unknown = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { token: 'not-a-token' });
    const old = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { token: expired });
    expect([missing.status, unknown.status, old.status]).toEqual([401, 401, 401]);
    expect(missing.body.cause).toBe('Missing X-Service-Client-Token header');
    expect(unknown.body.cause).toMatch(/^Unknown token/);
    expect(old.body.cause).toMatch(/^Token expired/);
  });
});
