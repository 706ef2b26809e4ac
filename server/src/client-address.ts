/** Client addresses as the per-address limits and the idempotency keys of anonymous callers count them. */
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client an address stands for, as the per-address limit counts it: an IPv4-mapped IPv6 address is its IPv4
 * address, and an IPv6 address is its /64 (one host usually holds a whole /64, so rotating the interface id would
 * otherwise give an attacker 2^64 fresh limits). Anything else is kept as it is (lower-cased).
 */
export function clientAddressKey(ip: string): string {
  let address = (ip || 'unknown').trim().toLowerCase();
  const zone = address.indexOf('%');
  if (zone > 0) address = address.slice(0, zone);
  const mapped = /^(?:0{0,4}:){0,5}(?:0{0,4}:)?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address.replace(/^::/, '0:'));
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(address)) return address.slice(0, 255);
  let tail = address;
  // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) is two groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(tail);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    tail = `${tail.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = tail.includes('::') ? (tail.split('::') as [string, string]) : [tail, undefined];
  const left = head ? head.split(':') : [];
  const right = rest === undefined ? [] : rest ? rest.split(':') : [];
  const groups = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
