/**
 * The one way email leaves the service: SES v2 in AWS (simple content: SES
 * builds the MIME message), `.eml` files in `DATA_DIR/outbox/` locally,
 * chosen by MAIL_TRANSPORT. The outbox mailer is local only
 * (shared/mail/outbox-mailer.ts): the local gateway and job runner install
 * it, so no Lambda bundles a MIME composer.
 */
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { config } from '../config.js';
import { captureClient } from '../observability/index.js';
import { recordSdkCalls } from '../recording.js';

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
export const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ');

/** The header every message carries (RFC 3834: no auto-replies to it). */
export const AUTO_SUBMITTED = { name: 'Auto-Submitted', value: 'auto-generated' };

/** Sends through SES v2 with simple content (text and HTML alternatives, UTF-8). */
export class SesMailer implements Mailer {
  private readonly ses = captureClient(recordSdkCalls(new SESv2Client({})));
  constructor(private readonly from: string) {}

  async send(message: MailMessage): Promise<void> {
    const utf8 = (Data: string) => ({ Data, Charset: 'UTF-8' });
    await this.ses.send(
      new SendEmailCommand({
        FromEmailAddress: oneLine(this.from),
        Destination: { ToAddresses: [oneLine(message.to)] },
        Content: {
          Simple: {
            Subject: utf8(oneLine(message.subject)),
            Body: { Text: utf8(message.text), Html: utf8(message.html) },
            Headers: [{ Name: AUTO_SUBMITTED.name, Value: AUTO_SUBMITTED.value }],
          },
        },
      }),
    );
  }
}

let localMailer: (() => Mailer) | undefined;

/** The local runtime's transport (MAIL_TRANSPORT=outbox): installed by infra/local, never in AWS. */
export function installLocalMailer(create: () => Mailer): void {
  localMailer = create;
}

let current: Mailer | undefined;

/** The mailer configured by MAIL_TRANSPORT and MAIL_FROM (created once per container). */
export function mailer(): Mailer {
  if (current) return current;
  if (config.mailTransport !== 'outbox') return (current = new SesMailer(config.mailFrom));
  if (!localMailer) throw new Error('MAIL_TRANSPORT=outbox needs the local runtime (infra/local installs the outbox mailer)');
  return (current = localMailer());
}
