/**
 * Which IP addresses are public: reachable on the internet, as opposed to this machine, its private
 * networks, link-local and carrier-grade NAT ranges, multicast and the ranges reserved for
 * documentation and benchmarks. Read by callbacks when an operator lets them reach public addresses
 * only (`CALLBACK_PUBLIC_ONLY`), so that an allowed host name whose address points inwards is not
 * posted to.
 */
import { BlockList, isIP } from 'node:net';

const NOT_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relays (withdrawn)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const NOT_PUBLIC_V6: [string, number][] = [
  ['::', 96], // unspecified, loopback and the old IPv4-compatible form
  ['100::', 64], // discard
  ['2001::', 23], // protocol assignments, Teredo included
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which carries an IPv4 address of any kind
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique local
  ['fec0::', 10], // site-local (withdrawn)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];

const notPublic = new BlockList();
for (const [net, prefix] of NOT_PUBLIC_V4) notPublic.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of NOT_PUBLIC_V6) notPublic.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries as IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96), else null. */
function embeddedV4(address: string): string | null {
  const lower = address.toLowerCase();
  for (const prefix of ['::ffff:', '64:ff9b::']) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    if (isIP(rest) === 4) return rest;
    // The hexadecimal spelling: ::ffff:7f00:1.
    const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    if (m) {
      const hi = parseInt(m[1]!, 16);
      const lo = parseInt(m[2]!, 16);
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
  }
  return null;
}

/** Whether `address` (IPv4 or IPv6, without brackets) is a public address; false for text that is not one. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !notPublic.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedV4(address);
  if (v4 !== null) return isPublicAddress(v4);
  return !notPublic.check(address, 'ipv6');
}
