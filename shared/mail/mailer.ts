/**
 * The one way email leaves the service: SES v2 in AWS, `.eml` files in
 * `DATA_DIR/outbox/` locally, chosen by MAIL_TRANSPORT. The MIME message is
 * built by nodemailer's MailComposer (header encoding, folding, multipart).
 */
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { config } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Header values never carry line breaks, whatever the caller passes (no header injection). */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ');

/** The raw RFC 5322 message (text and HTML alternatives). */
export async function buildMime(from: string, message: MailMessage): Promise<Buffer> {
  const composer = new MailComposer({
    from: oneLine(from),
    to: oneLine(message.to),
    subject: oneLine(message.subject),
    text: message.text,
    html: message.html,
    headers: { 'Auto-Submitted': 'auto-generated' },
  });
  return composer.compile().build();
}

/** Sends through SES v2 with raw content. */
export class SesMailer implements Mailer {
  private readonly ses = new SESv2Client({});
  constructor(private readonly from: string) {}

  async send(message: MailMessage): Promise<void> {
    const raw = await buildMime(this.from, message);
    await this.ses.send(new SendEmailCommand({ Content: { Raw: { Data: raw } } }));
  }
}

/** Writes one `.eml` file per message into a folder (local development and tests). */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly from: string,
    readonly dir: string,
  ) {}

  async send(message: MailMessage): Promise<void> {
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

let current: Mailer | undefined;

/** The mailer configured by MAIL_TRANSPORT and MAIL_FROM (created once per container). */
export function mailer(): Mailer {
  current ??= config.mailTransport === 'outbox' ? new OutboxMailer(config.mailFrom, outboxDir()) : new SesMailer(config.mailFrom);
  return current;
}
