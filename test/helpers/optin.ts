/**
 * Helpers of the opt-in tests: the real messages of the outbox mailer
 * (parsed with postal-mime), their confirmation links, and running the
 * reminder job as its schedule would.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import PostalMime, { type Email } from 'postal-mime';
import { invokeJob, scheduledEvent } from '../../infra/local/jobs.js';
import { jobList } from '../../shared/jobs.js';
import { outboxDir } from '../../shared/mail/outbox-mailer.js';

/** Messages are parsed once per test file (files are written whole, by rename). */
const parsed = new Map<string, Promise<Email>>();

/** Every message in the outbox addressed to `email`, oldest first. */
export async function mailsTo(email: string): Promise<Email[]> {
  const dir = outboxDir();
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml') && !n.startsWith('.')).sort();
  const mails = await Promise.all(names.map((n) => parsed.get(n) ?? parsed.set(n, readFile(join(dir, n)).then((raw) => PostalMime.parse(raw))).get(n)!));
  return mails.filter((m) => (m.to ?? []).some((a) => a.address?.toLowerCase() === email.toLowerCase()));
}

/** The confirmation link of a message (from its text part), checked against the HTML part. */
export function confirmationLink(mail: Email): string {
  const link = /https?:\/\/\S+\/v1\/optin\/confirm\/[A-Za-z0-9_-]+/.exec(mail.text ?? '')?.[0];
  if (!link) throw new Error(`no confirmation link in ${mail.subject}`);
  if (!(mail.html ?? '').includes(`href="${link}"`)) throw new Error('the HTML part has another link');
  return link;
}

/** A fresh address for one test. */
export const newEmail = (tag = 'reader') => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

/** Runs the reminder job as its EventBridge schedule would, at `at`. */
export function runReminderJob(at: Date) {
  const job = jobList.find((j) => j.id === 'optinReminders')!;
  return invokeJob(job, scheduledEvent(at)) as Promise<{ reminded: number }>;
}

export const DAY_MS = 86_400_000;
