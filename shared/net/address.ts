/**
 * Classifies IP addresses for outbound fetches of user-given URLs (CSV
 * import): only public unicast addresses may be reached. Pure; no network.
 */
import ipaddr from 'ipaddr.js';

/** Why an address is refused; undefined when it is a public unicast address. */
export type RefusedClass =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'carrier-grade NAT'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'cloud metadata'
  | 'reserved'
  | 'unique local'
  | 'special-purpose';

/** Well-known instance metadata addresses (AWS/GCP/Azure/OpenStack, ECS, AWS IPv6, Alibaba). */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '169.254.169.253', '100.100.100.200', 'fd00:ec2::254', 'fd00:ec2::23']);

const V4_CLASSES: Record<string, RefusedClass> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  multicast: 'multicast',
  broadcast: 'broadcast',
  unspecified: 'unspecified',
  reserved: 'reserved',
};

const V6_CLASSES: Record<string, RefusedClass> = {
  loopback: 'loopback',
  linkLocal: 'link-local',
  multicast: 'multicast',
  unspecified: 'unspecified',
  uniqueLocal: 'unique local',
};

/** IPv6 ranges refused whatever they embed: `::/96` (IPv4-compatible) and `64:ff9b:1::/48` (local-use NAT64). */
const REFUSED_V6: Array<[ipaddr.IPv6, number]> = [
  [ipaddr.IPv6.parse('::'), 96],
  [ipaddr.IPv6.parse('64:ff9b:1::'), 48],
];

/**
 * Parses an IP literal in any form a URL or resolver may carry: dotted
 * quad, decimal (`2130706433`), hex (`0x7f000001`), octal (`0177.0.0.1`),
 * short (`127.1`), IPv6 with or without brackets. Undefined for a host name.
 */
export function parseIp(host: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const noZone = bare.replace(/%.*$/, '');
  if (!ipaddr.isValid(noZone)) return undefined;
  return ipaddr.parse(noZone);
}

function classifyV4(ip: ipaddr.IPv4): RefusedClass | undefined {
  if (METADATA.has(ip.toString())) return 'cloud metadata';
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return V4_CLASSES[range] ?? 'special-purpose';
}

function embeddedV4(ip: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const b = ip.toByteArray();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return new ipaddr.IPv4(b.slice(12, 16));
  if (range === '6to4') return new ipaddr.IPv4(b.slice(2, 6));
  return undefined;
}

/**
 * The class that makes an address unreachable for imports, or undefined
 * for a public unicast address. IPv6 forms that embed an IPv4 address
 * (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4) are judged by
 * that address; IPv4-compatible `::/96`, local-use NAT64 `64:ff9b:1::/48`,
 * Teredo and other special IPv6 ranges are refused.
 */
export function classifyAddress(address: string | ipaddr.IPv4 | ipaddr.IPv6): RefusedClass | undefined {
  const ip = typeof address === 'string' ? parseIp(address) : address;
  if (!ip) return 'special-purpose';
  if (ip.kind() === 'ipv4') return classifyV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  if (METADATA.has(v6.toString())) return 'cloud metadata';
  const range = v6.range();
  if (range === 'unspecified' || range === 'loopback') return V6_CLASSES[range];
  // IPv4-compatible (::a.b.c.d, deprecated) and the local-use NAT64 prefix (RFC 8215): refused outright.
  if (REFUSED_V6.some(([net, bits]) => v6.match(net, bits))) return 'special-purpose';
  if (range === 'unicast') return undefined;
  const v4 = embeddedV4(v6, range);
  if (v4) return classifyV4(v4);
  return V6_CLASSES[range] ?? 'special-purpose';
}

/** The refusal for an address under the loopback setting, or undefined when it may be reached. */
export function refusal(address: string, { allowLoopback = false }: { allowLoopback?: boolean } = {}): RefusedClass | undefined {
  const refused = classifyAddress(address);
  return refused === 'loopback' && allowLoopback ? undefined : refused;
}
