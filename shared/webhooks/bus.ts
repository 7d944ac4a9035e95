/** The EventBridge bus of subscriber changes: PutEvents in batches of 10 (its limit), failed entries retried. */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { captureClient } from '../observability/index.js';
import { recordSdkCalls } from '../recording.js';
import type { ChangeEvent } from './changes.js';

/** The `source` of every event the service puts on the bus. */
export const EVENT_SOURCE = 'newsletter-service';

/**
 * Created once per container; endpoint from AWS_ENDPOINT_URL_EVENTBRIDGE (locally infra/local/queues.ts). Traced,
 * and its calls recorded for the local-equals-deployed check (IAM action `events:PutEvents`), as every client is.
 */
const eventBridge = /* @__PURE__ */ (() => captureClient(recordSdkCalls(new EventBridgeClient({}))))();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bus entry of a change: detail-type is the change type, detail the change (docs/api.md "Change events"). */
export function busEntry(busName: string, change: ChangeEvent): PutEventsRequestEntry {
  return { EventBusName: busName, Source: EVENT_SOURCE, DetailType: change.type, Time: new Date(change.time), Detail: JSON.stringify(change), Resources: [] };
}

/** Puts the changes on the bus, 10 per call; entries EventBridge failed are retried three times, then it throws. */
export async function putChanges(busName: string, changes: ChangeEvent[]): Promise<void> {
  for (let at = 0; at < changes.length; at += 10) {
    let entries = changes.slice(at, at + 10).map((c) => busEntry(busName, c));
    for (let attempt = 0; entries.length > 0; attempt++) {
      const out = await eventBridge.send(new PutEventsCommand({ Entries: entries }));
      if (!out.FailedEntryCount) break;
      if (attempt >= 3) throw new Error(`EventBridge refused ${out.FailedEntryCount} events: ${out.Entries?.find((e) => e.ErrorCode)?.ErrorCode ?? 'unknown'}`);
      entries = entries.filter((_, i) => out.Entries?.[i]?.ErrorCode);
      await sleep(100 * 2 ** attempt);
    }
  }
}
