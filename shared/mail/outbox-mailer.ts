/**
 * The local mail transport: one `.eml` file per message in `DATA_DIR/outbox/`
 * (read by the `/dev/outbox/` page and the tests), the MIME message built by
 * nodemailer's MailComposer. Local only: infra/local installs it; no Lambda
 * imports it.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { config } from '../config.js';
import { recordStandInCall } from '../recording.js';
import { AUTO_SUBMITTED, installLocalMailer, oneLine, type Mailer, type MailMessage } from './mailer.js';

/** The raw RFC 5322 message (text and HTML alternatives). */
export async function buildMime(from: string, message: MailMessage): Promise<Buffer> {
  const composer = new MailComposer({
    from: oneLine(from),
    to: oneLine(message.to),
    subject: oneLine(message.subject),
    text: message.text,
    html: message.html,
    headers: { [AUTO_SUBMITTED.name]: AUTO_SUBMITTED.value },
  });
  return composer.compile().build();
}

/** Writes one `.eml` file per message into a folder (local development and tests). */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly from: string,
    readonly dir: string,
  ) {}

  async send(message: MailMessage): Promise<void> {
    // In AWS this is SES v2's SendEmail from this address: recorded as such for the check against the stack.
    recordStandInCall('SESv2Client', 'SendEmailCommand', { FromEmailAddress: this.from });
    const raw = await buildMime(this.from, message);
    await mkdir(this.dir, { recursive: true });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.eml`;
    // Written under a temporary name and renamed, so a reader never sees half a message.
    const temp = join(this.dir, `.${name}.tmp`);
    await writeFile(temp, raw);
    await rename(temp, join(this.dir, name));
  }
}

/** The outbox folder of the local runtime. */
export const outboxDir = () => resolve(config.dataDir, 'outbox');

/** Makes the outbox the transport of MAIL_TRANSPORT=outbox (the local gateway and job runner call it when loaded). */
export function useOutboxMailer(): void {
  installLocalMailer(() => new OutboxMailer(config.mailFrom, outboxDir()));
}
