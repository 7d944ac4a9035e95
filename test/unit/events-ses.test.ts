import { describe, expect, it } from 'vitest';
import { addressOf, parseSesNotification, unwrapDeliveries } from '../../shared/events/ses.js';
import { sesFixture, snsEvent, sqsEvent } from '../fixtures/ses/fixtures.js';

const common = { campaign_id: 'cmp-42', newsletter_id: 'nl-7', email_list_id: 3 };

describe('parseSesNotification (SES event publishing format)', () => {
  it('Send → nl_send at the mail timestamp', () => {
    expect(parseSesNotification(sesFixture('send'))).toEqual({
      kind: 'events',
      clientId: 'acme',
      records: [{ event: 'nl_send', date: '2017-08-05T00:40:01.123Z', email: 'recipient@example.com', ...common }],
      unsubscribe: [],
    });
  });

  it('Open → nl_display at the open timestamp', () => {
    const parsed = parseSesNotification(sesFixture('open'));
    expect(parsed).toMatchObject({ records: [{ event: 'nl_display', date: '2017-08-05T00:45:13.478Z', email: 'recipient@example.com', ...common }] });
  });

  it('Click → nl_click with target_url from the link and target_id/target_position from link tags', () => {
    const parsed = parseSesNotification(sesFixture('click'));
    expect(parsed).toMatchObject({
      records: [
        {
          event: 'nl_click',
          date: '2017-08-05T00:47:24.912Z',
          ...common,
          target_url: 'https://www.example.com/articles/1?utm_source=nl,weekly',
          target_id: 'article-1',
          target_position: 3,
        },
      ],
    });
  });

  it('Click without link tags takes target_id/target_position from the link query', () => {
    const n = sesFixture('click');
    delete n.click!.linkTags;
    n.click!.link = 'https://r.example.com/go?target_id=a9&target_position=12';
    expect(parseSesNotification(n)).toMatchObject({ records: [{ target_id: 'a9', target_position: 12 }] });
  });

  it('Permanent bounce → nl_bounce type hard with the diagnostic, and an unsubscription with HARD_BOUNCE', () => {
    expect(parseSesNotification(sesFixture('bounce-permanent'))).toEqual({
      kind: 'events',
      clientId: 'acme',
      records: [{ event: 'nl_bounce', date: '2017-08-05T00:41:02.669Z', email: 'recipient@example.com', ...common, type: 'hard', message: 'smtp; 550 5.1.1 user unknown' }],
      unsubscribe: [{ email: 'recipient@example.com', cause: 'HARD_BOUNCE' }],
    });
  });

  it('Transient bounce → nl_bounce type soft, no unsubscription', () => {
    const parsed = parseSesNotification(sesFixture('bounce-transient'));
    expect(parsed).toMatchObject({ records: [{ event: 'nl_bounce', type: 'soft', message: 'smtp; 452 4.2.2 Mailbox full, "try later"' }], unsubscribe: [] });
  });

  it('Complaint → nl_complaint with the feedback type, and an unsubscription with READER; not-spam does not unsubscribe', () => {
    expect(parseSesNotification(sesFixture('complaint'))).toMatchObject({
      records: [{ event: 'nl_complaint', date: '2017-08-05T00:42:04.000Z', email: 'recipient@example.com', ...common, type: 'abuse' }],
      unsubscribe: [{ email: 'recipient@example.com', cause: 'READER' }],
    });
    const notSpam = sesFixture('complaint');
    notSpam.complaint!.complaintFeedbackType = 'not-spam';
    expect(parseSesNotification(notSpam)).toMatchObject({ records: [{ type: 'not-spam' }], unsubscribe: [] });
  });

  it('a hard bounce or a complaint without a list tag still unsubscribes (from every list: the ingester finds them)', () => {
    const bounce = sesFixture('bounce-permanent');
    delete bounce.mail.tags!.email_list_id;
    expect(parseSesNotification(bounce)).toMatchObject({ unsubscribe: [{ email: 'recipient@example.com', cause: 'HARD_BOUNCE' }] });
    const complaint = sesFixture('complaint');
    delete complaint.mail.tags!.email_list_id;
    expect(parseSesNotification(complaint)).toMatchObject({ unsubscribe: [{ email: 'recipient@example.com', cause: 'READER' }] });
  });

  it('ignores Delivery, notifications without a client tag, and a list tag that is not an integer', () => {
    expect(parseSesNotification(sesFixture('delivery'))).toMatchObject({ kind: 'ignored' });
    const untagged = sesFixture('send');
    delete untagged.mail.tags!.client_id;
    expect(parseSesNotification(untagged)).toMatchObject({ kind: 'ignored', reason: 'Send: no valid client_id tag' });
    const badList = parseSesNotification(sesFixture('bounce-permanent', { list: 'x' }));
    expect((badList as { records: object[] }).records[0]).not.toHaveProperty('email_list_id');
  });

  it('reads the identity-notification shape (notificationType) too', () => {
    const n = sesFixture('bounce-permanent');
    n.notificationType = n.eventType;
    delete n.eventType;
    expect(parseSesNotification(n)).toMatchObject({ records: [{ event: 'nl_bounce', type: 'hard' }] });
  });
});

describe('unwrapDeliveries', () => {
  it('takes SNS records (id = MessageId) and bare notifications (id = content hash)', () => {
    const n = sesFixture('send');
    const sns = snsEvent([n], ['m-1']);
    expect(unwrapDeliveries(sns)).toEqual([{ id: 'm-1', notification: n }]);
    const [bare] = unwrapDeliveries(n);
    expect(bare.notification).toEqual(n);
    expect(unwrapDeliveries([n])[0].id).toBe(bare.id);
    expect(addressOf('Jane <Jane@Example.COM>')).toBe('jane@example.com');
  });

  it('takes SQS records: the SNS envelope (id = SNS MessageId) or raw message delivery (id = body hash, the same on redelivery), with the SQS messageId', () => {
    const n = sesFixture('send');
    const enveloped = sqsEvent([n], { messageIds: ['sns-1'] });
    expect(unwrapDeliveries(enveloped)).toEqual([{ id: 'sns-1', notification: n, itemId: enveloped.Records[0].messageId }]);
    const raw = sqsEvent([n, n], { raw: true });
    const [a, b] = unwrapDeliveries(raw);
    expect(a).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/) as string, notification: n, itemId: raw.Records[0].messageId });
    expect(b.id).toBe(a.id);
    expect(b.itemId).toBe(raw.Records[1].messageId);
    const garbage = unwrapDeliveries({ Records: [{ messageId: 'q-1', body: 'not json' }] });
    expect(garbage).toEqual([{ id: expect.any(String) as string, notification: undefined, itemId: 'q-1' }]);
  });
});
