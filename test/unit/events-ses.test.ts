import { describe, expect, it } from 'vitest';
import { addressOf, parseSesNotification, unwrapDeliveries } from '../../shared/events/ses.js';
import { sesFixture, snsEvent } from '../fixtures/ses/fixtures.js';

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
    delete n.click.linkTags;
    n.click.link = 'https://r.example.com/go?target_id=a9&target_position=12';
    expect(parseSesNotification(n)).toMatchObject({ records: [{ target_id: 'a9', target_position: 12 }] });
  });

  it('Permanent bounce → nl_bounce type hard with the diagnostic, and an unsubscription with HARD_BOUNCE', () => {
    expect(parseSesNotification(sesFixture('bounce-permanent'))).toEqual({
      kind: 'events',
      clientId: 'acme',
      records: [{ event: 'nl_bounce', date: '2017-08-05T00:41:02.669Z', email: 'recipient@example.com', ...common, type: 'hard', message: 'smtp; 550 5.1.1 user unknown' }],
      unsubscribe: [{ email: 'recipient@example.com', listId: 3, cause: 'HARD_BOUNCE' }],
    });
  });

  it('Transient bounce → nl_bounce type soft, no unsubscription', () => {
    const parsed = parseSesNotification(sesFixture('bounce-transient'));
    expect(parsed).toMatchObject({ records: [{ event: 'nl_bounce', type: 'soft', message: 'smtp; 452 4.2.2 Mailbox full, "try later"' }], unsubscribe: [] });
  });

  it('Complaint → nl_complaint with the feedback type, and an unsubscription with READER; not-spam does not unsubscribe', () => {
    expect(parseSesNotification(sesFixture('complaint'))).toMatchObject({
      records: [{ event: 'nl_complaint', date: '2017-08-05T00:42:04.000Z', email: 'recipient@example.com', ...common, type: 'abuse' }],
      unsubscribe: [{ email: 'recipient@example.com', listId: 3, cause: 'READER' }],
    });
    const notSpam = sesFixture('complaint');
    notSpam.complaint.complaintFeedbackType = 'not-spam';
    expect(parseSesNotification(notSpam)).toMatchObject({ records: [{ type: 'not-spam' }], unsubscribe: [] });
  });

  it('ignores Delivery, notifications without a client tag, and a list tag that is not an integer', () => {
    expect(parseSesNotification(sesFixture('delivery'))).toMatchObject({ kind: 'ignored' });
    const untagged = sesFixture('send');
    delete untagged.mail.tags.client_id;
    expect(parseSesNotification(untagged)).toMatchObject({ kind: 'ignored', reason: 'Send: no valid client_id tag' });
    const badList = parseSesNotification(sesFixture('bounce-permanent', { list: 'x' }));
    expect(badList).toMatchObject({ unsubscribe: [] });
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
});
