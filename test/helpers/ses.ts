/** SES notifications through the real ingester, for the integration tests (SES bounce/complaint/open/... paths). */
import { invokeJob } from '../../infra/local/jobs.js';
import type { SesNotification } from '../../shared/events/ses.js';
import { jobList } from '../../shared/jobs.js';
import { sesFixture, type SesFixtureName } from '../fixtures/ses/fixtures.js';

/** A fixture for a client's default list, dated now and addressed to `email` (its bounced or complaining recipient too). */
export function sesNotification(name: SesFixtureName, client: { username: string; defaultListId: number }, email: string): SesNotification {
  const n = sesFixture(name, { client: client.username, list: String(client.defaultListId) });
  const now = new Date().toISOString();
  n.mail.timestamp = now;
  n.mail.destination = [email];
  for (const part of ['bounce', 'complaint', 'open', 'click'] as const) if (n[part]) n[part].timestamp = now;
  for (const r of n.bounce?.bouncedRecipients ?? n.complaint?.complainedRecipients ?? []) r.emailAddress = email;
  return n;
}

/** Runs the SES ingester (job `sesEvents`, its real handler) on an SNS or SQS event, as Lambda would. */
export const ingestSes = (event: object) =>
  invokeJob(jobList.find((j) => j.id === 'sesEvents')!, event) as Promise<{
    events: number;
    unsubscribed: number;
    ignored: string[];
    batchItemFailures: Array<{ itemIdentifier: string }>;
  }>;
