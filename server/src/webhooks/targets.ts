/**
 * Where a webhook may send (no server-side request forgery). A target URL is absolute http(s), without a user name or
 * password, https in production; its host, as an address or as every address its name resolves to, must be a public
 * unicast address: never loopback, private, link-local (cloud metadata lives there: 169.254.169.254), carrier-grade
 * NAT, multicast, broadcast, unspecified or reserved, in IPv4 or IPv6 (an IPv4-mapped IPv6 address is judged as the
 * IPv4 address it maps). Ranges are ipaddr.js's (the IANA special-purpose registries). The check runs when the
 * webhook is registered and again before every connection, and the connection goes to the very address that was
 * checked (resolving once), so a name that resolves elsewhere later (DNS rebinding) cannot reach an inside address.
 * `PWPUSH_WEBHOOKS_ALLOW_PRIVATE=true` lifts the address and https rules (development, tests).
 */
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

/** The address ranges a webhook may reach: public unicast only. */
export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  let address = ipaddr.parse(text);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  return address.range() === 'unicast';
}

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
  return ipaddr.isValid(host) && (ipaddr.IPv4.isValidFourPartDecimal(host) || host.includes(':')) ? host : null;
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
  if (!rules.allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a));
    if (refused !== undefined) {
      throw new TargetRefused(
        `resolves to a private or reserved address (${refused}), which this instance does not send to`,
      );
    }
  }
  return { url, address: addresses[0]! };
}
