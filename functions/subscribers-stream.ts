/** Job: the table stream's subscriber records → list counters, day statistics and raw events; answers a partial batch response. */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { jobHandler } from '../shared/observability/index.js';
import { applyStreamRecords } from '../shared/subscribers/stream-consumer.js';

const processor = new BatchProcessor(EventType.DynamoDBStreams);

export const handler = jobHandler('subscribersStream', async (event: DynamoDBStreamEvent, context) => {
  // The batch is applied in groups of one transaction each; a record fails when its group (or an earlier one) did.
  const outcome = applyStreamRecords(event.Records);
  const recordHandler = async (record: DynamoDBRecord) => {
    const { done, failure } = await outcome;
    if (!done.has(record.eventID ?? '')) throw failure instanceof Error ? failure : new Error('an earlier group of the batch failed');
  };
  return processPartialResponse(event, recordHandler, processor, { context });
});
