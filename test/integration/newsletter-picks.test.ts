import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CreateMultipartUploadCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { invokeJob } from '../../infra/local/jobs.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../shared/config.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createBlock } from '../../shared/clients/clients.js';
import { jobList } from '../../shared/jobs.js';
import { s3 } from '../../shared/s3.js';
import { jobOfKey, requestKey } from '../../shared/picks/job-items.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { killAt } from '../helpers/kill.js';
import { newClient, request, useService, type ErrorBody, type TestClient } from '../helpers/service.js';

const service = useService();
const site = () => `https://news-${randomUUID().slice(0, 8)}.picks.example`;
const worker = jobList.find((j) => j.id === 'newsletterPicksWorker')!;

interface Pick {
  guid: string;
  url: string;
  title: string;
  desc: string;
  image: string;
  category: string;
  published_time: number;
}
interface Line {
  email: string;
  guid: string;
  recommendations: Pick[];
}
interface Job {
  job_id: string;
  block_key: string;
  status: string;
  members: number;
  rid: string;
  result_url: string | null;
  error?: string | null;
}

const picksUrl = (listId: number, query: string) => `${service.url}/v1/newsletters/lists/${listId}/recommendations?${query}`;
/** A link's rid: the member's id (newsletter.<16>) and its signature for the article. */
const RID = /\?rid=(newsletter\.[A-Za-z0-9_-]{16})\.[A-Za-z0-9_-]{16}$/;
/** Lines with the rids taken out of the links (each request and member has its own). */
const withoutRid = (lines: Line[]) => lines.map((l) => ({ ...l, recommendations: l.recommendations.map((r) => ({ ...r, url: r.url.replace(RID, '') })) }));

async function subscribe(client: TestClient, lines: Array<{ email: string; guid?: string; subscribed?: boolean }>) {
  const reply = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, { method: 'POST', token: client.token, body: lines });
  expect(reply.status, reply.text).toBe(200);
}

async function read(client: TestClient, userId: string, url: string) {
  const reply = await request(`${service.url}/v1/track/${client.trackingKey}`, {
    method: 'POST',
    body: { user_id: userId, url, title: `Title of ${url}`, description: `About ${url}`, category: 'news', published_time: new Date(Date.now() - 3600_000).toISOString() },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** Runs the worker as S3 would for each request object of the job (start, then each resume) until the job is over. */
async function runJob(clientId: string, job: Job): Promise<Job> {
  for (let step = 1; step < 100; step++) {
    // The request object the service put (the S3 notification's key): its existence is checked, so a key the worker does not read fails here.
    const key = requestKey(clientId, job.job_id, step);
    expect(jobOfKey(key), key).toEqual({ clientId, jobId: job.job_id });
    await s3.send(new HeadObjectCommand({ Bucket: config.importsBucket, Key: key }));
    await invokeJob(worker, { Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: config.importsBucket }, object: { key } } }] });
    const client = clients.get(clientId)!;
    const now = await request<Job>(picksUrl(client.defaultListId, `block_key=${job.block_key}&job=${job.job_id}`), { token: client.token });
    expect(now.status, now.text).toBe(200);
    if (now.body.status === 'done' || now.body.status === 'failed') return now.body;
  }
  throw new Error('the job did not end');
}

async function resultLines(job: Job): Promise<Line[]> {
  expect(job.status).toBe('done');
  const res = await fetch(job.result_url!);
  expect(res.status).toBe(200);
  const text = await res.text();
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
}

const clients = new Map<string, TestClient>();

/** A client whose list has 3 subscribed members with reading histories and 1 unsubscribed member; 6 articles. */
async function fixture() {
  const client = await newClient(service, { siteHosts: ['*.picks.example'] });
  clients.set(client.username, client);
  const block = await createBlock(client.username);
  const base = site();
  const articles = Array.from({ length: 6 }, (_, i) => `${base}/story-${i}`);
  await subscribe(client, [
    { email: 'ann@example.com', guid: 'guid-ann' },
    { email: 'bob@example.com', guid: 'guid-bob' },
    { email: 'cy@example.com', guid: 'guid-cy' },
    { email: 'dee@example.com', guid: 'guid-dee' },
  ]);
  await subscribe(client, [{ email: 'dee@example.com', subscribed: false }]);
  // Other readers make every article popular; the members' own reads follow.
  for (const [i, url] of articles.entries()) for (let r = 0; r <= i; r++) await read(client, `crowd-${r}`, url);
  await read(client, 'guid-ann', articles[0]);
  await read(client, 'guid-ann', articles[1]);
  await read(client, 'guid-bob', articles[5]);
  await read(client, 'guid-dee', articles[2]);
  await service.drain();
  const reads: Record<string, string[]> = { 'guid-ann': [articles[0], articles[1]].map(articleGuid), 'guid-bob': [articleGuid(articles[5])], 'guid-cy': [] };
  return { client, block, articles, reads };
}

afterEach(() => {
  delete process.env.PICKS_DIRECT_MAX_MEMBERS;
  delete process.env.PICKS_JOB_MARGIN_MS;
  delete process.env.PICKS_STALL_SECONDS;
  delete process.env.PICKS_JOBS_PER_HOUR;
});

describe('GET /v1/newsletters/lists/{list_id}/recommendations', () => {
  it("answers every subscribed member (none other) with the block's picks, without what each already read, linked through the redirect with the newsletter rid", async () => {
    const { client, block, articles, reads } = await fixture();
    const reply = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}&rows=10`), { token: client.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.map((l) => [l.email, l.guid])).toEqual([
      ['ann@example.com', 'guid-ann'],
      ['bob@example.com', 'guid-bob'],
      ['cy@example.com', 'guid-cy'],
    ]);
    const all = new Set(articles.map(articleGuid));
    const rids = new Set<string>();
    for (const line of reply.body) {
      const ids = new Set(line.recommendations.map((r) => RID.exec(r.url)?.[1]));
      expect(ids.size, line.email).toBe(1);
      const got = line.recommendations.map((r) => r.guid);
      // Exactly the articles the member has not read.
      expect(new Set(got), line.email).toEqual(new Set([...all].filter((g) => !reads[line.guid].includes(g))));
      for (const r of line.recommendations) {
        const match = RID.exec(r.url);
        expect(r.url.startsWith(`${service.url}/v1/r/${block}/${r.guid}?rid=`), r.url).toBe(true);
        expect(match, r.url).not.toBeNull();
        rids.add(match![1]);
        expect(r.title).toBe(`Title of ${articles.find((u) => articleGuid(u) === r.guid)}`);
        expect([r.category, typeof r.published_time]).toEqual(['news', 'number']);
      }
    }
    // One id per member: each member's clicks count apart.
    expect(rids.size).toBe(3);
    // A link leads to its article.
    const pick = reply.body[2].recommendations[0];
    const follow = await request(pick.url);
    expect(follow.status).toBe(302);
    expect(follow.headers.get('location')).toBe(articles.find((u) => articleGuid(u) === pick.guid));
    // rows bounds the picks per member.
    const two = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}&rows=2`), { token: client.token });
    expect(two.body.map((l) => l.recommendations.length)).toEqual([2, 2, 2]);
  });

  it("counts its picks as the newsletter variant's impressions and each member's click once", async () => {
    const { client, block } = await fixture();
    const reply = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}&rows=2`), { token: client.token });
    expect(reply.status, reply.text).toBe(200);
    const shown = reply.body.reduce((n, l) => n + l.recommendations.length, 0);
    // Two members follow their first pick, one of them twice.
    for (const url of [reply.body[0].recommendations[0].url, reply.body[1].recommendations[0].url, reply.body[1].recommendations[0].url]) {
      expect((await request(url)).status).toBe(302);
    }
    await service.drain();
    const day = new Date().toISOString().slice(0, 10);
    const daily = await request<Array<{ variant: string; served: number; impressions: number; clicks: number }>>(`${service.url}/v1/stats/recommendations/daily?from=${day}&to=${day}&block_key=${block}`, { token: client.token });
    expect(daily.body.filter((r) => r.variant === 'newsletter').map((r) => [r.served, r.impressions, r.clicks])).toEqual([[3, shown, 2]]);
  });

  it('answers NDJSON when asked: one member per line, the same content', async () => {
    const { client, block } = await fixture();
    const json = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token });
    const nd = await request(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token, headers: { accept: 'application/x-ndjson' } });
    expect(nd.status).toBe(200);
    expect(nd.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(nd.text.endsWith('\n')).toBe(true);
    const lines = nd.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(3);
    expect(withoutRid(lines)).toEqual(withoutRid(json.body));
  });

  it('makes a large list (over PICKS_DIRECT_MAX_MEMBERS, or async=true) a job whose NDJSON file has the same content', async () => {
    const { client, block } = await fixture();
    const direct = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token });
    process.env.PICKS_DIRECT_MAX_MEMBERS = '2';
    const accepted = await request<Job>(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token });
    expect(accepted.status, accepted.text).toBe(202);
    // The Location carries the block: block_key is required on every request, a job's poll included (docs/api.md).
    expect(accepted.headers.get('location')).toBe(`/v1/newsletters/lists/${client.defaultListId}/recommendations?block_key=${block}&job=${accepted.body.job_id}`);
    expect((await request<Job>(`${service.url}${accepted.headers.get('location')}`, { token: client.token })).body).toMatchObject({ job_id: accepted.body.job_id, block_key: block });
    expect(accepted.body).toMatchObject({ status: 'queued', members: 0, result_url: null });
    expect(accepted.body.rid).toMatch(/^newsletter\.[A-Za-z0-9_-]{16}$/);
    const done = await runJob(client.username, accepted.body);
    expect(done.members).toBe(3);
    const lines = await resultLines(done);
    expect(withoutRid(lines)).toEqual(withoutRid(direct.body));
    // One id per member, none of the direct request's.
    const ids = lines.map((l) => new Set(l.recommendations.map((r) => RID.exec(r.url)![1])));
    expect(ids.map((set) => set.size)).toEqual([1, 1, 1]);
    const directIds = new Set(direct.body.flatMap((l) => l.recommendations.map((r) => RID.exec(r.url)![1])));
    expect(new Set(ids.flatMap((set) => [...set])).size).toBe(3);
    expect(ids.some((set) => [...set].some((id) => directIds.has(id)))).toBe(false);
    // Another client cannot see the job.
    const other = await newClient(service);
    expect((await request(picksUrl(other.defaultListId, `block_key=${block}&job=${done.job_id}`), { token: other.token })).status).toBe(404);
    expect((await request(picksUrl(client.defaultListId, `block_key=${block}&job=${done.job_id}`))).status).toBe(401);
    // Nor does another block of the client, and a poll without the block is refused as the document says.
    const otherBlock = await createBlock(client.username);
    expect((await request(picksUrl(client.defaultListId, `block_key=${otherBlock}&job=${done.job_id}`), { token: client.token })).status).toBe(404);
    expect((await request<ErrorBody>(picksUrl(client.defaultListId, `job=${done.job_id}`), { token: client.token })).body).toEqual({ status: 400, cause: 'query.block_key: is required' });
  });

  it('writes a job over several invocations (a part each) and joins the parts into one file in list order', async () => {
    const client = await newClient(service, { siteHosts: ['*.picks.example'] });
    clients.set(client.username, client);
    const block = await createBlock(client.username);
    const base = site();
    for (const [i, reader] of ['m-0001', 'm-0700', 'm-1100'].entries()) await read(client, reader, `${base}/story-${i}`);
    await read(client, 'crowd', `${base}/story-9`);
    await service.drain();
    const members = Array.from({ length: 1201 }, (_, i) => ({ email: `m${String(i).padStart(4, '0')}@example.com`, guid: `m-${String(i).padStart(4, '0')}` }));
    await subscribe(client, members);
    const direct = await request<Line[]>(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token });
    expect(direct.body).toHaveLength(1201);
    // Every invocation stops after its first page (500 members): three parts.
    process.env.PICKS_JOB_MARGIN_MS = String(10 ** 9);
    const accepted = await request<Job>(picksUrl(client.defaultListId, `block_key=${block}&async=true`), { token: client.token });
    expect(accepted.status).toBe(202);
    const done = await runJob(client.username, accepted.body);
    const lines = await resultLines(done);
    const stored = await s3.send(new ListObjectsV2Command({ Bucket: config.importsBucket, Prefix: `picks/results/${client.username}/${done.job_id}/` }));
    expect((stored.Contents ?? []).map((o) => o.Key!.split('/').at(-1)).sort()).toEqual(['part-0001.ndjson', 'part-0002.ndjson', 'part-0003.ndjson', 'picks.ndjson']);
    expect(lines.map((l) => l.email)).toEqual(members.map((m) => m.email));
    expect(withoutRid(lines)).toEqual(withoutRid(direct.body));
    // The members who read something do not get it back.
    expect(lines[700].recommendations.map((r) => r.guid)).not.toContain(articleGuid(`${base}/story-1`));
    expect(lines[701].recommendations.map((r) => r.guid)).toContain(articleGuid(`${base}/story-1`));
  });

  it('answers a job whose worker died "failed" with its cause once PICKS_STALL_SECONDS pass, not "running" for good', async () => {
    const { client, block } = await fixture();
    process.env.PICKS_DIRECT_MAX_MEMBERS = '2';
    const accepted = await request<Job>(picksUrl(client.defaultListId, `block_key=${block}`), { token: client.token });
    expect(accepted.status).toBe(202);
    // The worker dies at its first S3 call (writing its part), after it took its step: nothing it does afterwards lands.
    const key = requestKey(client.username, accepted.body.job_id, 1);
    const event = { Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: config.importsBucket }, object: { key } } }] };
    const kill = killAt((command) => (command instanceof PutObjectCommand || command instanceof CreateMultipartUploadCommand ? 'kill' : 'pass'));
    await expect(invokeJob(worker, event)).rejects.toThrow();
    kill.restore();
    expect(kill.killed).toBe(true);
    // Lambda's retry of the same event finds the step taken and does nothing.
    await invokeJob(worker, event);
    const poll = () => request<Job>(picksUrl(client.defaultListId, `block_key=${block}&job=${accepted.body.job_id}`), { token: client.token });
    expect((await poll()).body).toMatchObject({ status: 'running', error: null });
    process.env.PICKS_STALL_SECONDS = '1';
    await new Promise((done) => setTimeout(done, 1_100));
    const failed = await poll();
    expect(failed.body).toMatchObject({ status: 'failed', result_url: null });
    expect(failed.body.error).toMatch(/^The picks worker stopped without finishing .*ask again for a new job\.$/);
    // Recorded: the same answer with the stall time back at its default.
    delete process.env.PICKS_STALL_SECONDS;
    expect((await poll()).body).toMatchObject({ status: 'failed', error: failed.body.error });
  });

  it('answers 404 for a job past its expiry, though DynamoDB has not deleted its item yet', async () => {
    const { client, block } = await fixture();
    const accepted = await request<Job>(picksUrl(client.defaultListId, `block_key=${block}&async=true`), { token: client.token });
    expect(accepted.status).toBe(202);
    const poll = () => request<ErrorBody>(picksUrl(client.defaultListId, `block_key=${block}&job=${accepted.body.job_id}`), { token: client.token });
    expect((await poll()).status).toBe(200);
    // DynamoDB deletes expired items late: the item is still there, its ttl a second past.
    await ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.picksJob(client.username, accepted.body.job_id), UpdateExpression: 'SET #ttl = :past', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 } }));
    expect((await poll()).status).toBe(404);
  });

  it('refuses a job beyond PICKS_JOBS_PER_HOUR with 429 and Retry-After; direct answers are not counted', async () => {
    const { client, block } = await fixture();
    process.env.PICKS_JOBS_PER_HOUR = '2';
    const ask = (query: string) => request<ErrorBody>(picksUrl(client.defaultListId, `block_key=${block}${query}`), { token: client.token });
    expect((await ask('&async=true')).status).toBe(202);
    expect((await ask('')).status).toBe(200);
    expect((await ask('&async=true')).status).toBe(202);
    const refused = await ask('&async=true');
    expect([refused.status, refused.body.cause]).toEqual([429, expect.stringMatching(/^Too many newsletter-picks jobs: at most 2 per hour for a client; retry in \d+ s$/)]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A direct answer is still given.
    expect((await ask('')).status).toBe(200);
  });

  it('answers 401 without a token, 404 for an unknown block, another client\'s block or list, 400 for rows out of range or no block', async () => {
    const { client, block } = await fixture();
    const other = await newClient(service, { siteHosts: ['*.picks.example'] });
    const otherBlock = await createBlock(other.username);
    expect((await request(picksUrl(client.defaultListId, `block_key=${block}`))).status).toBe(401);
    const unknown = await request<ErrorBody>(picksUrl(client.defaultListId, 'block_key=no-such-block'), { token: client.token });
    expect(unknown).toMatchObject({ status: 404, body: { cause: 'Unknown block key' } });
    expect((await request<ErrorBody>(picksUrl(client.defaultListId, `block_key=${otherBlock}`), { token: client.token })).body).toEqual({ status: 404, cause: 'Unknown block key' });
    expect((await request<ErrorBody>(picksUrl(999_999, `block_key=${block}`), { token: client.token })).body).toEqual({ status: 404, cause: 'Unknown list 999999' });
    for (const [query, cause] of [
      [`block_key=${block}&rows=0`, 'query.rows: must be at least 1'],
      [`block_key=${block}&rows=21`, 'query.rows: must be at most 20'],
      [`block_key=${block}&rows=x`, 'query.rows: must be a non-negative integer'],
      [`block_key=${block}&async=yes`, 'query.async: must be true or false'],
      ['rows=3', 'query.block_key: is required'],
    ]) {
      const reply = await request<ErrorBody>(picksUrl(client.defaultListId, query), { token: client.token });
      expect(reply.body, query).toEqual({ status: 400, cause });
    }
    expect((await request<ErrorBody>(picksUrl(client.defaultListId, `block_key=${block}&job=AAAAAAAAAAAAAAAA`), { token: client.token })).body).toEqual({ status: 404, cause: 'Unknown newsletter-picks job AAAAAAAAAAAAAAAA' });
    expect((await request<ErrorBody>(picksUrl(client.defaultListId, `block_key=${block}&job=short`), { token: client.token })).body).toEqual({ status: 400, cause: 'query.job: must be a job id' });
  });
});
