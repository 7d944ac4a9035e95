/**
 * Double opt-in (spec 4.1, §3): pending registrations, confirmation links,
 * the update path and reminders. Only SHA-256 hashes of confirmation tokens
 * are stored; a pending registration and its links expire after
 * OPTIN_EXPIRY_DAYS (DynamoDB TTL removes the items).
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { newSecret, sha256 } from '../auth/secrets.js';
import { publisherOf, type Publisher } from '../clients/branding.js';
import { getClient, resolvePublicKey } from '../clients/clients.js';
import { config } from '../config.js';
import { ddb, isConditionFailure, queryPages, runPool, tableName, transactWrite } from '../db/client.js';
import { keys } from '../db/keys.js';
import { InvalidSubmissionError } from './errors.js';
import { mailer } from '../mail/mailer.js';
import { addLogKeys, count } from '../observability/index.js';
import { enforceSubscribeLimits } from '../ratelimit/limits.js';
import { applySubscribers, getSubscriber, updateSubscriberFields } from '../subscribers/index.js';
import type { SubscriberLine } from '../subscribers/types.js';
import { confirmationEmail } from './email.js';
import { addDays, chooseLists, daysBetween, resendDue } from './rules.js';
import type { SubscribeBodyOutput } from './schemas.js';

/** The 200 messages (spec 4.1). The first is also the answer for an address already subscribed. */
export const messages = {
  pending: 'Thank you! A confirmation email will arrive shortly: please follow its link to confirm your subscription.',
  updated: 'The subscriber was updated.',
};

interface PendingItem {
  pk: string;
  sk: string;
  type: 'optin';
  pendingId: string;
  clientId: string;
  email: string;
  formKey: string;
  listIds: number[];
  data: Record<string, unknown>;
  openTrackingConsent?: boolean;
  createdAt: string;
  lastSentAt: string;
  expiresAt: string;
  ttl: number;
  remindedAt?: string;
}

/**
 * A confirmation link. It carries the submission it was mailed for (lists,
 * data, consent), so it confirms exactly that, whatever was submitted later.
 */
interface TokenItem {
  clientId: string;
  email: string;
  formKey: string;
  pendingId: string;
  expiresAt: string;
  usedAt?: string;
  /** Absent on links mailed before links carried their submission: those confirm the pending record. */
  listIds?: number[];
  data?: Record<string, unknown>;
  openTrackingConsent?: boolean | null;
}

const epochSeconds = (iso: string) => Math.ceil(Date.parse(iso) / 1000);
/** A refused condition, on one item or in a transaction: here both mean another request got there first. */
const lostRace = (err: unknown) => isConditionFailure(err) || (err as Error).name === 'TransactionCanceledException';

/**
 * POST /v1/subscribe/{tracking_key}: resolves the keys, counts the request
 * against the rate limits, then updates a known subscriber (update: true)
 * or registers a pending opt-in and mails its confirmation link.
 */
export async function subscribe(trackingKey: string, body: SubscribeBodyOutput, sourceIp: string, now = new Date()): Promise<{ success: string }> {
  const tracking = await resolvePublicKey('tracking', trackingKey);
  if (!tracking) throw new InvalidSubmissionError('tracking_key', 'path.tracking_key: unknown tracking key');
  const clientId = tracking.clientId;
  addLogKeys({ clientId });
  await enforceSubscribeLimits(clientId, sourceIp, (await getClient(clientId))?.rateLimits, now.getTime());
  const form = await resolvePublicKey('form', body.formKey);
  // A form of another client gets the same cause as an unknown one: keys of other clients are not confirmed.
  if (!form || form.clientId !== clientId) throw new InvalidSubmissionError('form_key', 'body.form_key: unknown form key for this tracking key');
  const lists = chooseLists(form, body.emailLists, body.update, body.emailListsProblem);
  if (typeof lists === 'string') throw new InvalidSubmissionError('email_lists', lists);
  const known = await Promise.all(lists.map((listId) => getSubscriber(clientId, listId, body.email)));

  if (body.update) {
    const targets = lists.filter((_, i) => known[i]);
    if (targets.length === 0) throw new InvalidSubmissionError('email', `Could not update. Unknown subscriber ${body.email}.`);
    for (const listId of targets) {
      const report = await updateSubscriberFields(clientId, listId, { line: 1, email: body.email, data: body.data, openTrackingConsent: body.openTrackingConsent });
      // The stored data would grow past its limit: nothing was written for this list.
      if (report.errors.length > 0) throw new InvalidSubmissionError('body', `body: ${report.errors[0].cause}`);
    }
    return { success: messages.updated };
  }

  const toConfirm = lists.filter((_, i) => !known[i]?.subscribed);
  // Already subscribed everywhere: the same answer as a new registration, and nothing changes.
  if (toConfirm.length > 0) await registerPending(clientId, body, toConfirm, now);
  count('OptinsSubmitted');
  return { success: messages.pending };
}

async function registerPending(clientId: string, body: SubscribeBodyOutput, listIds: number[], now: Date): Promise<void> {
  const nowIso = now.toISOString();
  const key = keys.optinPending(clientId, body.email, body.formKey);
  const existing = (await ddb.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item as PendingItem | undefined;
  if (existing && existing.expiresAt > nowIso) {
    // Within the resend period a resubmission changes nothing: no email, so nothing it asked for could ever be
    // confirmed, and the links already mailed keep confirming what their own submissions asked for.
    if (!resendDue(existing.lastSentAt, now, config.optinResendMinutes)) return;
    // Due: this submission becomes what reminders re-send, and its own link goes out.
    const updated: PendingItem = { ...existing, listIds, data: body.data, openTrackingConsent: body.openTrackingConsent, lastSentAt: nowIso };
    try {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: 'SET listIds = :lists, #data = :data, openTrackingConsent = :consent, lastSentAt = :now',
          // Only one of concurrent resubmissions wins the right to resend.
          ConditionExpression: 'pendingId = :pid AND lastSentAt = :prev',
          ExpressionAttributeNames: { '#data': 'data' },
          ExpressionAttributeValues: {
            ':lists': listIds,
            ':data': updated.data,
            ':consent': updated.openTrackingConsent ?? null,
            ':pid': existing.pendingId,
            ':now': nowIso,
            ':prev': existing.lastSentAt,
          },
        }),
      );
    } catch (err) {
      if (lostRace(err)) return;
      throw err;
    }
    await mailLink(updated, false, now);
    return;
  }
  const expiresAt = addDays(now, config.optinExpiryDays);
  const item: PendingItem = {
    ...key,
    ...keys.optinReminderDue(addDays(now, config.optinReminderDays)),
    type: 'optin',
    pendingId: randomUUID(),
    clientId,
    email: body.email,
    formKey: body.formKey,
    listIds,
    data: body.data,
    openTrackingConsent: body.openTrackingConsent,
    createdAt: nowIso,
    lastSentAt: nowIso,
    expiresAt,
    ttl: epochSeconds(expiresAt),
  };
  try {
    await ddb.send(
      new PutCommand({
        TableName: tableName(),
        Item: item,
        // One pending registration per address and form; an expired one (not yet removed by TTL) is replaced.
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
        ExpressionAttributeValues: { ':now': nowIso },
      }),
    );
  } catch (err) {
    if (lostRace(err)) return; // a concurrent submission created it and mails the link
    throw err;
  }
  try {
    await mailLink(item, false, now);
  } catch (err) {
    // Lets the reader's retry send the email at once instead of waiting for the resend period.
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET lastSentAt = :never',
        ConditionExpression: 'pendingId = :pid',
        ExpressionAttributeValues: { ':never': new Date(0).toISOString(), ':pid': item.pendingId },
      }),
    ).catch(() => undefined);
    throw err;
  }
}

/**
 * Stores the hash of a new single-use token for a pending opt-in, with the
 * submission it confirms (the pending record's lists, data and consent as
 * they are now), and mails its link.
 */
async function mailLink(pending: PendingItem, reminder: boolean, now: Date): Promise<void> {
  const token = newSecret();
  const tokenHash = sha256(token);
  const tokenItem: TokenItem = {
    clientId: pending.clientId,
    email: pending.email,
    formKey: pending.formKey,
    pendingId: pending.pendingId,
    expiresAt: pending.expiresAt,
    listIds: pending.listIds,
    data: pending.data,
    openTrackingConsent: pending.openTrackingConsent ?? null,
  };
  // The address's partition first lists the link, so users/delete finds every link that holds the address (a crash
  // in between leaves an entry without a link, which deleting skips).
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.optinTokenRef(pending.clientId, pending.email, tokenHash), type: 'optinTokenRef', ttl: epochSeconds(pending.expiresAt) },
    }),
  );
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.optinToken(tokenHash), type: 'optinToken', ...tokenItem, createdAt: now.toISOString(), ttl: epochSeconds(pending.expiresAt) },
    }),
  );
  const link = `${config.publicBaseUrl}/v1/optin/confirm/${token}`;
  const publisher = publisherOf(await getClient(pending.clientId), pending.clientId);
  await mailer().send(confirmationEmail({ to: pending.email, publisher, link, expiresAt: pending.expiresAt, reminder }));
}

export type ConfirmOutcome = { outcome: 'confirmed' | 'already' | 'invalid'; publisher?: Publisher; redirectUrl?: string };

/** Only absolute http(s) addresses are followed. */
function safeRedirect(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * GET /v1/optin/confirm/{token}: subscribes the address to the lists of its
 * pending opt-in (exact counts and nl_subscribe events through
 * applySubscribers), then removes the pending item and marks the token used.
 * A second click (or a concurrent one) changes nothing and says so.
 */
export async function confirm(token: string, now = new Date(), from: { ip?: string; userAgent?: string } = {}): Promise<ConfirmOutcome> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return { outcome: 'invalid' };
  const nowIso = now.toISOString();
  const tokenKey = keys.optinToken(sha256(token));
  const found = (await ddb.send(new GetCommand({ TableName: tableName(), Key: tokenKey, ConsistentRead: true }))).Item as TokenItem | undefined;
  if (!found || found.expiresAt <= nowIso) return { outcome: 'invalid' };
  const [form, client] = await Promise.all([resolvePublicKey('form', found.formKey), getClient(found.clientId)]);
  const outcome = { publisher: publisherOf(client, found.clientId), redirectUrl: safeRedirect(form?.confirmRedirectUrl) };
  if (found.usedAt) return { outcome: 'already', ...outcome };
  const pendingKey = keys.optinPending(found.clientId, found.email, found.formKey);
  const pending = (await ddb.send(new GetCommand({ TableName: tableName(), Key: pendingKey, ConsistentRead: true }))).Item as PendingItem | undefined;
  if (!pending || pending.pendingId !== found.pendingId) return { outcome: 'already', ...outcome };
  // A short lease: of concurrent clicks one applies, the others answer "already confirmed".
  // Should the holder fail, the lease runs out and the link works again (opIds make re-applying harmless).
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: pendingKey,
        UpdateExpression: 'SET confirmingUntil = :until',
        ConditionExpression: 'pendingId = :pid AND (attribute_not_exists(confirmingUntil) OR confirmingUntil < :now)',
        ExpressionAttributeValues: { ':pid': pending.pendingId, ':now': nowIso, ':until': new Date(now.getTime() + 30_000).toISOString() },
      }),
    );
  } catch (err) {
    if (lostRace(err)) return { outcome: 'already', ...outcome };
    throw err;
  }
  // What this link's own submission asked for (links mailed before links carried it: the pending record).
  const asked = found.listIds ? found : pending;
  for (const listId of asked.listIds!) {
    const line: SubscriberLine & { opId: string } = {
      line: 1,
      email: pending.email,
      subscribed: true,
      data: asked.data ?? {},
      openTrackingConsent: asked.openTrackingConsent ?? undefined,
      opId: `optin#${pending.pendingId}#${listId}`,
      consent: { source: 'optin', form_key: found.formKey, requested_at: pending.createdAt, confirmed_at: nowIso, ip: from.ip || undefined, user_agent: from.userAgent?.slice(0, 256) || undefined },
    };
    await applySubscribers(pending.clientId, listId, [line]);
  }
  try {
    await transactWrite([
      { Delete: { TableName: tableName(), Key: pendingKey, ConditionExpression: 'pendingId = :pid', ExpressionAttributeValues: { ':pid': pending.pendingId } } },
      { Update: { TableName: tableName(), Key: tokenKey, UpdateExpression: 'SET usedAt = :now', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':now': nowIso } } },
    ]);
  } catch (err) {
    if (!lostRace(err)) throw err; // a concurrent click finished first: same result
  }
  count('OptinsConfirmed');
  return { outcome: 'confirmed', ...outcome };
}

/**
 * The reminder job: one reminder (with a new link) to each pending opt-in
 * whose reminder is due (OPTIN_REMINDER_DAYS after the first submission) and
 * that is neither confirmed nor expired. Marking comes before sending, under
 * a condition, so no registration is reminded twice even with overlapping runs.
 */
export async function sendReminders(now = new Date()): Promise<{ reminded: number }> {
  const nowIso = now.toISOString();
  const days = daysBetween(new Date(now.getTime() - config.optinExpiryDays * 86_400_000), now);
  let reminded = 0;
  for (const day of days) {
    const pages = queryPages<PendingItem>({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :day AND gsi1sk <= :now',
      ExpressionAttributeValues: { ':day': keys.optinReminderDay(day), ':now': nowIso },
    });
    for await (const page of pages) {
      await runPool(page, 4, async (candidate) => {
        if (await remind(candidate, now)) reminded++;
      });
    }
  }
  count('OptinRemindersSent', reminded);
  return { reminded };
}

async function remind(candidate: PendingItem, now: Date): Promise<boolean> {
  const nowIso = now.toISOString();
  // Subscribed meanwhile by another way (list API, import): no reminder, the pending record goes.
  const states = await Promise.all(candidate.listIds.map((listId) => getSubscriber(candidate.clientId, listId, candidate.email)));
  if (states.every((state) => state?.subscribed)) {
    await ddb.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: { pk: candidate.pk, sk: candidate.sk },
        ConditionExpression: 'pendingId = :pid',
        ExpressionAttributeValues: { ':pid': candidate.pendingId },
      }),
    ).catch((err: unknown) => {
      if (!lostRace(err)) throw err;
    });
    return false;
  }
  let pending: PendingItem;
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk: candidate.pk, sk: candidate.sk },
        UpdateExpression: 'SET remindedAt = :now, lastSentAt = :now REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'attribute_exists(pk) AND pendingId = :pid AND attribute_not_exists(remindedAt) AND expiresAt > :now',
        ExpressionAttributeValues: { ':now': nowIso, ':pid': candidate.pendingId },
        ReturnValues: 'ALL_NEW',
      }),
    );
    pending = out.Attributes as PendingItem;
  } catch (err) {
    if (lostRace(err)) return false; // confirmed, expired, replaced or reminded meanwhile
    throw err;
  }
  await mailLink(pending, true, now);
  return true;
}
