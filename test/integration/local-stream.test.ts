/**
 * The local stand-in for the stream's event source mapping (infra/local/stream.ts): started on a table that has no
 * record yet (a fresh `npm start`, a fresh test run), it still hands over the first writes. DynamoDB Local answers
 * GetRecords with TrimmedDataAccessException on an iterator taken from a shard before its first record.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient, GetRecordsCommand, TrimmedDataAccessException } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, afterEach, expect, inject, it, vi } from 'vitest';
import { ensureTable, localAwsEnv } from '../../infra/local/services.js';
import { startLocalStream, type LocalStream } from '../../infra/local/stream.js';

const { dynamoEndpoint } = inject('services');
const ddb = new DynamoDBClient({ endpoint: dynamoEndpoint, region: localAwsEnv.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
type Records = { Records: Array<{ dynamodb?: { Keys?: { sk?: { S?: string } } } }> };
const streams: LocalStream[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of streams.splice(0)) await s.stop();
});
afterAll(() => ddb.destroy());
const put = (tableName: string, sk: string) => ddb.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'CLIENT#fresh#LIST#1' }, sk: { S: sk } } }));

/** A poller of a new table that records the sort keys it hands over. */
async function fresh() {
  const tableName = `fresh-${randomUUID().slice(0, 8)}`;
  await ensureTable(dynamoEndpoint, tableName);
  const delivered: string[] = [];
  const logged: string[] = [];
  const stream = await startLocalStream({
    dynamoEndpoint,
    tableName,
    log: (line) => logged.push(line),
    invoke: (_job, event) => {
      for (const r of (event as Records).Records) delivered.push(r.dynamodb!.Keys!.sk!.S!);
      return Promise.resolve({ batchItemFailures: [] });
    },
  });
  streams.push(stream);
  return { tableName, delivered, logged, stream };
}

it('hands over the first writes to a table whose stream had no record when polling began', async () => {
  const { tableName, delivered, logged, stream } = await fresh();
  // A pass over the empty shard first: its iterator is taken before any record exists.
  await stream.drain();
  for (const n of [1, 2, 3]) await put(tableName, `SUB#first${n}@example.com`);
  await vi.waitFor(() => expect(delivered).toEqual(['SUB#first1@example.com', 'SUB#first2@example.com', 'SUB#first3@example.com']), { timeout: 20_000, interval: 100 });
  expect(logged.filter((l) => /records given up/.test(l))).toEqual([]);
});

it.each([1, 3])('hands over every record when GetRecords answers TrimmedDataAccessException on %i iterators in a row', async (times) => {
  const { tableName, delivered, logged, stream } = await fresh();
  await put(tableName, 'SUB#before@example.com');
  await stream.drain();
  expect(delivered).toEqual(['SUB#before@example.com']);
  let refusals = 0;
  const poisoned = new Set<string>();
  const send = Reflect.get(DynamoDBStreamsClient.prototype, 'send') as (command: unknown) => Promise<unknown>;
  vi.spyOn(DynamoDBStreamsClient.prototype, 'send').mockImplementation(function (this: DynamoDBStreamsClient, command: unknown) {
    // As DynamoDB Local does: an iterator refused once is refused every time after.
    if (command instanceof GetRecordsCommand && (poisoned.has(command.input.ShardIterator!) || refusals < times)) {
      if (!poisoned.has(command.input.ShardIterator!)) refusals++;
      poisoned.add(command.input.ShardIterator!);
      return Promise.reject(new TrimmedDataAccessException({ message: 'The operation attempted to read past the oldest stream record in a shard.', $metadata: {} }));
    }
    return Reflect.apply(send, this, [command]);
  } as never);
  for (const n of [1, 2, 3]) await put(tableName, `SUB#after${n}@example.com`);
  await vi.waitFor(() => expect(new Set(delivered)).toEqual(new Set(['SUB#before@example.com', 'SUB#after1@example.com', 'SUB#after2@example.com', 'SUB#after3@example.com'])), { timeout: 30_000, interval: 100 });
  expect(refusals).toBe(times);
  // Once: a fresh iterator at the position, nothing again. More: the shard read again from its oldest record.
  if (times === 1) expect(delivered).toHaveLength(4);
  else expect(logged.some((l) => /reading it again from its oldest record/.test(l))).toBe(true);
});
