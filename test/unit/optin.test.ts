import PostalMime from 'postal-mime';
import * as v from 'valibot';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { describe, expect, it, vi } from 'vitest';
import { SesMailer } from '../../shared/mail/mailer.js';
import { buildMime } from '../../shared/mail/outbox-mailer.js';
import { confirmationEmail } from '../../shared/optin/email.js';
import { chooseLists, daysBetween, resendDue } from '../../shared/optin/rules.js';
import { SubscribeBodySchema } from '../../shared/optin/schemas.js';
import { ipBucket, subscribeLimits } from '../../shared/ratelimit/limits.js';
import { windowOf } from '../../shared/ratelimit/ratelimit.js';

const parse = (body: unknown) => v.safeParse(SubscribeBodySchema, body);

describe('subscribe body (JSON and form)', () => {
  it('normalises form fields: repeated email_lists as an array, a single one as a string, booleans as strings', () => {
    // Prepare: what querystring.parse gives for a form
    const repeated = parse({ email: ' Reader@Example.COM ', form_key: 'f', email_lists: ['1', '3'], update: 'false', open_tracking_consent: 'TRUE', data_first_name: 'Ann' });
    const single = parse({ email: 'a@b.co', form_key: 'f', 'email_lists[]': '2', update: 'True' });
    // Assess
    expect(repeated.success && repeated.output).toEqual({ email: 'reader@example.com', formKey: 'f', emailLists: [1, 3], emailListsProblem: undefined, update: false, openTrackingConsent: true, data: { data_first_name: 'Ann' } });
    expect(single.success && single.output).toMatchObject({ emailLists: [2], update: true, openTrackingConsent: undefined });
  });

  it('keeps JSON values and leaves consent unchanged for any other value (rule of 2.4)', () => {
    const out = parse({ email: 'a@b.co', form_key: 'f', email_lists: [4, 4, 5], update: true, open_tracking_consent: 'yes' });
    expect(out.success && out.output).toMatchObject({ emailLists: [4, 5], update: true, openTrackingConsent: undefined });
  });

  it('rejects an invalid email, list ids that are not integers, and an update that is not a boolean', () => {
    const issues = (body: unknown) => {
      const r = parse(body);
      return r.success ? undefined : [v.getDotPath(r.issues[0]), r.issues[0].message];
    };
    expect(issues({ email: 'not-an-email', form_key: 'f' })).toEqual(['email', 'must be a valid email: it has no @']);
    expect(issues({ email: 'a@b.co\r\nBcc: x@y.z', form_key: 'f' })?.[1]).toMatch(/^must be a valid email: it has an invalid local part/);
    const badLists = parse({ email: 'a@b.co', form_key: 'f', email_lists: ['1', 'x'] });
    expect(badLists.success && badLists.output.emailListsProblem).toBe('body.email_lists: must be list ids (integers from 1 to 9999999999), got "x"');
    expect(issues({ email: 'a@b.co', form_key: 'f', update: 'maybe' })).toEqual(['update', 'must be true or false']);
    expect(issues({ email: 'a@b.co', form_key: 'f', data_x: { nested: true } })?.[1]).toMatch(/data_x: must be a string/);
  });
});

describe('opt-in rules', () => {
  it('takes a list form its own lists and ignores email_lists, even a malformed one', () => {
    expect(chooseLists({ listIds: [1, 2], global: false }, [9], false)).toEqual([1, 2]);
    expect(chooseLists({ listIds: [1, 2], global: false }, undefined, false, 'body.email_lists: bad')).toEqual([1, 2]);
    expect(chooseLists({ listIds: [1, 2], global: true }, undefined, false, 'body.email_lists: bad')).toBe('body.email_lists: bad');
  });

  it('requires email_lists within the lists of a global form, except for an update', () => {
    const form = { listIds: [1, 2, 3], global: true };
    expect(chooseLists(form, [3, 1], false)).toEqual([3, 1]);
    expect(chooseLists(form, undefined, false)).toMatch(/^body\.email_lists: is required/);
    expect(chooseLists(form, [2, 7], false)).toBe('body.email_lists: list(s) 7 not offered by this form; choose among 1, 2, 3');
    expect(chooseLists(form, undefined, true)).toEqual([1, 2, 3]);
  });

  it('resends only once the period has passed', () => {
    const sent = '2026-01-01T10:00:00.000Z';
    expect(resendDue(sent, new Date('2026-01-01T10:14:59.999Z'), 15)).toBe(false);
    expect(resendDue(sent, new Date('2026-01-01T10:15:00.000Z'), 15)).toBe(true);
  });

  it('lists the UTC days of a range', () => {
    expect(daysBetween(new Date('2026-02-27T23:00:00Z'), new Date('2026-03-01T01:00:00Z'))).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });
});

describe('rate limit rules', () => {
  it('counts per minute window and says how long to wait', () => {
    const at = Date.parse('2026-01-01T10:00:45.200Z');
    expect(windowOf(at).retryAfterSeconds).toBe(15);
    expect(windowOf(at).window).toBe(windowOf(Date.parse('2026-01-01T10:00:00.000Z')).window);
    expect(windowOf(Date.parse('2026-01-01T10:00:59.999Z')).retryAfterSeconds).toBe(1);
  });

  it("uses the spec's defaults unless the client overrides them with valid numbers", () => {
    expect(subscribeLimits(undefined)).toEqual({ perIpPerMinute: 5, perKeyPerMinute: 10 });
    expect(subscribeLimits({ perIpPerMinute: 50, perKeyPerMinute: Number.NaN })).toEqual({ perIpPerMinute: 50, perKeyPerMinute: 10 });
  });

  it('counts IPv6 addresses by their /64 and IPv4-mapped ones as IPv4', () => {
    expect(ipBucket('2001:db8:1:2:aaaa::1')).toBe(ipBucket('2001:db8:1:2:bbbb::9'));
    expect(ipBucket('2001:db8:1:2::1')).not.toBe(ipBucket('2001:db8:1:3::1'));
    expect(ipBucket('::ffff:192.0.2.1')).toBe('192.0.2.1');
  });
});

describe('confirmation email', () => {
  it('escapes the link in HTML and greets without reader data', async () => {
    // Prepare
    const message = confirmationEmail({
      to: 'reader@example.com',
      publisher: { name: 'acme' },
      link: 'https://api.example/v1/optin/confirm/abc?x=1&y=2',
      expiresAt: '2026-02-01T00:00:00.000Z',
      reminder: false,
    });
    // Act
    const raw = await buildMime('newsletter@example.com', message);
    const mail = await PostalMime.parse(raw);
    // Assess
    expect(mail.subject).toBe('Please confirm your subscription');
    expect(mail.text).toMatch(/^Hello,$/m);
    expect(mail.html).toContain('href="https://api.example/v1/optin/confirm/abc?x=1&amp;y=2"');
    expect(mail.text).toContain('https://api.example/v1/optin/confirm/abc?x=1&y=2');
  });

  it('turns line breaks of header values into spaces', async () => {
    const raw = (await buildMime('a@example.com', { to: 'b@example.com', subject: 'Hi\r\nBcc: evil@example.com', text: 't', html: '<p>t</p>' })).toString();
    expect(raw).not.toMatch(/^Bcc:/im);
  });
});

describe('SES mailer', () => {
  it('sends simple content through SES v2: one line of header values, text and HTML, the Auto-Submitted header', async () => {
    // Prepare: no network; capture the command the SDK would send
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    const send = vi.spyOn(SESv2Client.prototype, 'send').mockImplementation(() => Promise.resolve({ MessageId: 'm-1' }));
    try {
      // Act
      await new SesMailer('newsletter@example.com').send({ to: 'reader@example.com', subject: 'S\r\nBcc: evil@example.com', text: 'T', html: '<p>H</p>' });
      // Assess
      expect(send).toHaveBeenCalledTimes(1);
      const command = send.mock.calls[0][0] as SendEmailCommand;
      expect(command).toBeInstanceOf(SendEmailCommand);
      expect(command.input).toEqual({
        FromEmailAddress: 'newsletter@example.com',
        Destination: { ToAddresses: ['reader@example.com'] },
        Content: {
          Simple: {
            Subject: { Data: 'S Bcc: evil@example.com', Charset: 'UTF-8' },
            Body: { Text: { Data: 'T', Charset: 'UTF-8' }, Html: { Data: '<p>H</p>', Charset: 'UTF-8' } },
            Headers: [{ Name: 'Auto-Submitted', Value: 'auto-generated' }],
          },
        },
      });
    } finally {
      send.mockRestore();
    }
  });
});
