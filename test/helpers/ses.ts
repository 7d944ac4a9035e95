/** Helpers of the SES notification tests: the ingester job run as its queue would, and fixtures addressed to one reader now. */
import { invokeJob } from '../../infra/local/jobs.js';
import { jobList } from '../../shared/jobs.js';
import { sesFixture, type SesFixtureName } from '../fixtures/ses/fixtures.js';
import type { TestClient } from './service.js';

/** Runs the SES delivery-event ingester's real handler with an SNS or SQS event. */
export const ingestSes = (event: object) =>
  invokeJob(jobList.find((j) => j.id === 'sesEvents')!, event) as Promise<{
    events: number;
    unsubscribed: number;
    ignored: string[];
    batchItemFailures: Array<{ itemIdentifier: string }>;
  }>;

/** A fixture of the client's default list, sent to `email` now (its bounced or complained recipient too). */
export function sesNotification(name: SesFixtureName, client: TestClient, email: string) {
  const n = sesFixture(name, { client: client.username, list: String(client.defaultListId) });
  const now = new Date().toISOString();
  n.mail.timestamp = now;
  n.mail.destination = [email];
  for (const part of ['bounce', 'complaint', 'open', 'click'] as const) if (n[part]) n[part].timestamp = now;
  for (const r of n.bounce?.bouncedRecipients ?? n.complaint?.complainedRecipients ?? []) r.emailAddress = email;
  return n;
}
