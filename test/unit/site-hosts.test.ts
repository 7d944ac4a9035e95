import { describe, expect, it } from 'vitest';
import { parseSiteHosts, siteHostAllowed, siteUrlAllowed } from '../../shared/clients/site-hosts.js';
import { blockSettings, hostAllowed } from '../../shared/recos/settings.js';

describe('client site hosts', () => {
  it('normalises entries: trimmed, lower-cased, punycode, deduplicated; a comma-separated string or an array', () => {
    expect(parseSiteHosts(' News.Example.com, *.Example.ORG,localhost,127.0.0.1,news.example.com ')).toEqual([
      'news.example.com',
      '*.example.org',
      'localhost',
      '127.0.0.1',
    ]);
    expect(parseSiteHosts(['bücher.example'])).toEqual(['xn--bcher-kva.example']);
    expect(parseSiteHosts('')).toEqual([]);
  });

  it('refuses what is not a host name, and wildcards that are too broad', () => {
    for (const bad of ['https://a.example', 'a.example:8080', 'a.example/path', 'user@a.example', '*', '*.', 'a.*.example', '[::1]', 'a..example', 'a b']) {
      expect(() => parseSiteHosts(bad), bad).toThrow(/^hosts: ".*" is not a host name/);
    }
    for (const broad of ['*.com', '*.1.2.3.4']) expect(() => parseSiteHosts(broad), broad).toThrow(/is too broad/);
    expect(() => parseSiteHosts(Array.from({ length: 51 }, (_, i) => `h${i}.example`))).toThrow('hosts: at most 50 entries');
  });

  it('matches exact hosts exactly and wildcards on subdomains only; nothing without a list', () => {
    const hosts = parseSiteHosts('news.example.com,*.example.org');
    expect(siteHostAllowed(hosts, 'news.example.com')).toBe(true);
    expect(siteHostAllowed(hosts, 'www.news.example.com')).toBe(false);
    expect(siteHostAllowed(hosts, 'example.com')).toBe(false);
    expect(siteHostAllowed(hosts, 'a.example.org')).toBe(true);
    expect(siteHostAllowed(hosts, 'a.b.example.org')).toBe(true);
    expect(siteHostAllowed(hosts, 'example.org')).toBe(false);
    expect(siteHostAllowed(hosts, 'evilexample.org')).toBe(false);
    expect(siteHostAllowed(hosts, 'example.org.evil.example')).toBe(false);
    expect(siteHostAllowed([], 'news.example.com')).toBe(false);
    expect(siteUrlAllowed(hosts, 'https://news.example.com:8443/a')).toBe(true);
    expect(siteUrlAllowed(hosts, 'javascript://news.example.com/%0aalert(1)')).toBe(false);
    expect(siteUrlAllowed(hosts, 'not a url')).toBe(false);
  });

  it("denies every article of a client without site hosts; a block's hosts only narrow the site hosts", () => {
    const block = { kind: 'block' as const, clientId: 'c' };
    expect(hostAllowed(blockSettings(block, undefined), 'https://news.example.com/a')).toBe(false);
    expect(hostAllowed(blockSettings(block, {}), 'https://news.example.com/a')).toBe(false);
    const narrowed = blockSettings({ ...block, hosts: ['example.com'] }, { siteHosts: ['news.example.com', 'evil.example'] });
    expect(hostAllowed(narrowed, 'https://news.example.com/a')).toBe(true);
    expect(hostAllowed(narrowed, 'https://evil.example/a')).toBe(false);
    expect(hostAllowed(narrowed, 'https://sport.example.com/a')).toBe(false);
  });
});
