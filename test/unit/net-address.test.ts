import { describe, expect, it } from 'vitest';
import { classifyAddress, parseIp, refusal } from '../../shared/net/address.js';
import { checkUrl, NOT_ALLOWED, UrlFetchError } from '../../shared/net/safe-fetch.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.170.2', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
  ])('refuses IPv4 %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['2001:db8::1', 'special-purpose'],
    ['2001::1', 'special-purpose'],
    ['[::1]', 'loopback'],
  ])('refuses IPv6 %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:100.64.0.1', 'carrier-grade NAT'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
  ])('judges IPv6 %s that embeds IPv4 by that address: %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each(['::a00:1', '::7f00:1', '::808:808', '::0:a9fe:a9fe', '64:ff9b:1::a00:1', '64:ff9b:1::808:808', '64:ff9b:1:ffff::1', '64:ff9b:1:a00:1::'])(
    'refuses the IPv4-compatible or local-use NAT64 address %s outright',
    (address) => {
      expect(classifyAddress(address)).toBe('special-purpose');
      expect(refusal(address, { allowLoopback: true })).toBe('special-purpose');
    },
  );

  it.each([
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0', 'unspecified'],
    ['10.1', 'private'],
    ['3232235777', 'private'],
    ['0xa9fea9fe', 'cloud metadata'],
    ['2852039166', 'cloud metadata'],
  ])('parses the decimal/hex/octal/short form %s and refuses it as %s', (address, expected) => {
    expect(parseIp(address)).toBeDefined();
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'lets the public unicast address %s through',
    (address) => {
      expect(classifyAddress(address)).toBeUndefined();
    },
  );

  it('treats a host name as not an IP literal', () => {
    expect(parseIp('localhost')).toBeUndefined();
    expect(parseIp('example.com')).toBeUndefined();
  });
});

describe('refusal with IMPORT_ALLOW_LOOPBACK', () => {
  it('lets loopback through only when allowed, and nothing else', () => {
    expect(refusal('127.0.0.1')).toBe('loopback');
    expect(refusal('127.0.0.1', { allowLoopback: true })).toBeUndefined();
    expect(refusal('::1', { allowLoopback: true })).toBeUndefined();
    expect(refusal('::ffff:127.0.0.1', { allowLoopback: true })).toBeUndefined();
    for (const other of ['0.0.0.0', '10.0.0.1', '169.254.169.254', '::', 'fe80::1', '100.64.0.1']) {
      expect(refusal(other, { allowLoopback: true }), other).toBeDefined();
    }
  });
});

describe('checkUrl', () => {
  const off = { allowLoopback: false };
  it.each(['ftp://example.com/a.csv', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'data:text/csv,email'])('refuses the scheme of %s', (url) => {
    expect(() => checkUrl(url, off)).toThrow(/only http and https/);
  });

  it.each([
    'http://127.0.0.1/a.csv',
    'http://2130706433/a.csv',
    'http://0x7f000001/a.csv',
    'http://0x7f.1/a.csv',
    'http://127.1/a.csv',
    'http://0177.0.0.1/a.csv',
    'http://[::1]/a.csv',
    'http://[::ffff:127.0.0.1]/a.csv',
    'http://0.0.0.0/a.csv',
    'http://0/a.csv',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://10.0.0.1/a.csv',
    'https://192.168.0.1/a.csv',
    'http://100.64.1.1/a.csv',
  ])('refuses %s before any connection', (url) => {
    expect(() => checkUrl(url, off)).toThrow(UrlFetchError);
    expect(() => checkUrl(url, off)).toThrow(`url: ${NOT_ALLOWED}`);
  });

  it('refuses credentials and garbage, accepts public http(s) and host names (checked at connect time)', () => {
    expect(() => checkUrl('http://user:pw@example.com/a.csv', off)).toThrow(/credentials/);
    expect(() => checkUrl('not a url', off)).toThrow(/not a valid URL/);
    expect(checkUrl('https://example.com/a.csv', off).hostname).toBe('example.com');
    expect(checkUrl('http://8.8.8.8/a.csv', off).hostname).toBe('8.8.8.8');
    expect(checkUrl('http://localhost/a.csv', off).hostname).toBe('localhost');
  });
});
