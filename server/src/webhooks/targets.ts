/**
 * Where a webhook may send (no server-side request forgery). A target URL is absolute http(s), without a user name or
 * password, https in production; its host, as an address or as every address its name resolves to, must be a public
 * unicast address: never loopback, private, link-local (cloud metadata lives there: 169.254.169.254), carrier-grade
 * NAT, multicast, broadcast, unspecified or reserved, in IPv4 or IPv6. Ranges are ipaddr.js's (the IANA
 * special-purpose registries); IPv4 embedded in IPv6 is judged by `isPublicAddress` below. The check runs when the
 * webhook is registered and again before every connection, and the connection goes to the very address that was
 * checked (resolving once), so a name that resolves elsewhere later (DNS rebinding) cannot reach an inside address.
 * A refusal says the target is not allowed and names the setting, never the address a name resolved to (a user would
 * otherwise map the instance's internal DNS). `PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true` lifts the address and https rules
 * (development, tests).
 *
 * This is the only check of outbound requests: webhook deliveries are the only requests the server makes to a URL a
 * user chose. Single sign-on (the provider's discovery, token endpoint and keys) and the SMTP relay are the operator's
 * settings.
 */
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to its addresses (node:dns `lookup` by default; tests give their own). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface TargetRules {
  allowPrivate: boolean;
  requireHttps: boolean;
  resolve: Resolver;
}

/** A checked target: the URL and the address to connect to. */
export interface Target {
  url: URL;
  address: string;
}

export class TargetRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * An address as ipaddr.js holds it, read as the socket would (null: not an address, or one with a zone id). Node's
 * `isIP` (inet_pton) decides the syntax: dotted decimal only, as a connection reads it. ipaddr.js is given an IPv6
 * address's dotted tail as two hex groups, because it reads `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), where the
 * socket connects to the IPv4-compatible `::a.b.c.d` (and Node prints `::7f00:1` so).
 */
function addressOf(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const family = isIP(text);
  if (family === 4) return ipaddr.IPv4.parse(text);
  if (family !== 6 || text.includes('%')) return null;
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    [((Number(a) << 8) | Number(b)).toString(16), ((Number(c) << 8) | Number(d)).toString(16)].join(':'),
  );
  return ipaddr.IPv6.parse(hex);
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function lastIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const [high, low] = address.parts.slice(-2) as [number, number];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 address an IPv6 address stands for, when a connection to it reaches that IPv4 address and may be judged by
 * it: IPv4-mapped (`::ffff:0:0/96`, the socket connects over IPv4) and the NAT64 well-known prefix (`64:ff9b::/96`,
 * RFC 6052: a translator connects to the IPv4 address; an IPv6-only host reaches every IPv4 target so). Null for any
 * other address.
 */
function standsForIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return lastIPv4(address);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return lastIPv4(address);
  return null;
}

/** The IPv4 address a target address stands for (itself, IPv4-mapped, NAT64 well-known prefix), or null. */
export function ipv4Standing(text: string): string | null {
  const address = addressOf(text);
  if (!address) return null;
  if (address.kind() === 'ipv4') return address.toString();
  return standsForIPv4(address as ipaddr.IPv6)?.toString() ?? null;
}

/**
 * An ISATAP interface id (RFC 5214: `0:5efe` or `200:5efe`, with the universal/local and group bits either way, then
 * an IPv4 address): a host with an ISATAP tunnel on that prefix sends to the IPv4 address.
 */
const isatapIPv4 = (address: ipaddr.IPv6) =>
  (address.parts[4]! & 0xfcff) === 0 && address.parts[5] === 0x5efe ? lastIPv4(address) : null;

/** Global unicast IPv6 (2000::/3): everything outside it is special-purpose or unassigned. */
const isGlobalUnicast = (address: ipaddr.IPv6) => (address.parts[0]! & 0xe000) === 0x2000;

/**
 * The addresses a webhook may reach: public unicast only. IPv4: ipaddr.js's `unicast` range. IPv6, with IPv4 embedded
 * decided range by range (issue 45):
 * - IPv4-mapped `::ffff:0:0/96` and the NAT64 well-known prefix `64:ff9b::/96`: judged as the IPv4 address they hold;
 * - refused whatever they hold: IPv4-compatible `::/96` (deprecated; `[::7f00:1]` is loopback's), IPv4-translated
 *   `::ffff:0:0:0/96` (SIIT), local-use NAT64 `64:ff9b:1::/48` (the operator's translator, whose embedding depends
 *   on its prefix length), 6to4 `2002::/16` and Teredo `2001::/32` (tunnels to the IPv4 address they hold), and
 *   everything outside global unicast `2000::/3`;
 * - an ISATAP interface id in any prefix: refused when the IPv4 address it holds is not public;
 * - the rest: ipaddr.js's `unicast` range (not unique local, link-local, multicast, documentation, …).
 * A network-specific NAT64 prefix of the operator's own cannot be known here: refusing its private translations is
 * the operator's egress firewall's job (docs/webhooks.md).
 */
export function isPublicAddress(text: string): boolean {
  const address = addressOf(text);
  if (!address) return false;
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as ipaddr.IPv6;
  const embedded = standsForIPv4(v6);
  if (embedded) return embedded.range() === 'unicast';
  if (!isGlobalUnicast(v6) || v6.range() !== 'unicast') return false;
  const isatap = isatapIPv4(v6);
  return isatap === null || isatap.range() === 'unicast';
}

/**
 * The refusal of a private or reserved target (`is` an address literal, or `resolves to` one): "not allowed" and the
 * setting that allows it, never the address (a name's addresses would map the instance's internal DNS for whoever
 * registers names). At most 200 characters with the delivery log's `address refused: ` before it.
 */
const notAllowed = (how: 'is' | 'resolves to') =>
  `${how} a private or reserved address, which is not allowed (PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true allows private targets, for development)`;

/** The URL's form: absolute http(s), no credentials, https where required. Throws TargetRefused. */
function parseTargetUrl(text: string, rules: Pick<TargetRules, 'requireHttps'>): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefused('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('must be an absolute http(s) URL');
  if (rules.requireHttps && url.protocol !== 'https:') throw new TargetRefused('must be an https URL');
  if (url.username || url.password) throw new TargetRefused('must not hold a user name or password');
  if (!url.hostname) throw new TargetRefused('must name a host');
  return url;
}

/** The host of a URL as an address (brackets of IPv6 literals dropped), or null for a name. */
function literalAddress(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) !== 0 ? host : null;
}

/**
 * Resolves the URL's host once and checks every address; the target to connect to is the first. Throws
 * TargetRefused for a host that does not resolve or any address outside the public ranges (unless allowed).
 */
export async function checkTarget(text: string, rules: TargetRules): Promise<Target> {
  const url = parseTargetUrl(text, rules);
  const literal = literalAddress(url);
  let addresses: string[];
  if (literal) addresses = [literal];
  else {
    try {
      addresses = await rules.resolve(url.hostname);
    } catch {
      throw new TargetRefused('names a host that does not resolve');
    }
  }
  if (addresses.length === 0) throw new TargetRefused('names a host that does not resolve');
  if (!rules.allowPrivate && !addresses.every(isPublicAddress)) {
    throw new TargetRefused(notAllowed(literal ? 'is' : 'resolves to'));
  }
  return { url, address: addresses[0]! };
}
