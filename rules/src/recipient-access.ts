/**
 * Who may open a push (issue 42): the network allow-list (`allowed_networks`, CIDR ranges) and the specific people
 * (`recipient_emails`, or Password Pusher Pro's `authenticated_recipients` with `notify_emails_to`). Browser-safe: the
 * server and the stateful mock read and match the lists with these functions. Addresses are parsed here, not with
 * `node:net`, so the mock in a browser decides exactly as the server does.
 */
import type { PushInput } from './generated/types.gen.js';
import { isPlainAddress } from './notify.js';

/** The most ranges a push may list (the contract's `maxItems`). */
export const MAX_ALLOWED_NETWORKS = 20;
/** The most addresses a push may list (the contract's `maxItems`, as `notify_emails_to`'s 5). */
export const MAX_RECIPIENT_EMAILS = 5;
/** A code's lifetime, and the code's digits. */
export const ACCESS_CODE_SECONDS = 600;
export const ACCESS_CODE_DIGITS = 8;
/** `requestAccessCode`'s limits: per push and per client address, in this window. */
export const ACCESS_CODE_WINDOW_SECONDS = 900;
export const ACCESS_CODES_PER_PUSH = 5;
export const ACCESS_CODES_PER_CLIENT = 10;

export const RECIPIENT_TEXT = {
  invalidNetwork: 'contains an invalid network',
  hostBits: 'has host bits set',
  duplicateNetworks: 'contains duplicate networks',
  invalidEmail: 'contains invalid email(s)',
  duplicateEmails: 'contains duplicate emails',
  needsAddresses: 'needs notify_emails_to or recipient_emails',
} as const;

/** An IP address as its bytes (4 or 16). */
type Bytes = readonly number[];

function parseIPv4(text: string): Bytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

function parseIPv6(text: string): Bytes | null {
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return null;
  let head = text;
  let tail: number[] = [];
  // An embedded IPv4 tail (`::ffff:192.0.2.1`) is the last two groups.
  const v4At = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseIPv4(text.slice(v4At + 1));
    if (!v4) return null;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    head = text.slice(0, v4At + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!left || !right) return null;
  const given = left.length + right.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return null;
    groups = [...left, ...Array<number>(8 - given).fill(0), ...right, ...tail];
  } else {
    if (given !== 8) return null;
    groups = [...left, ...tail];
  }
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** An address's bytes; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is its IPv4 address. Null: not an address. */
export function parseIpAddress(text: string): Bytes | null {
  const address = text.trim().replace(/%.*$/, '');
  if (address.includes(':')) {
    const bytes = parseIPv6(address);
    if (!bytes) return null;
    const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
    return mapped ? bytes.slice(12) : bytes;
  }
  return parseIPv4(address);
}

interface Network {
  bytes: Bytes;
  prefix: number;
}

function formatNetwork({ bytes, prefix }: Network): string {
  if (bytes.length === 4) return `${bytes.join('.')}/${prefix}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // The longest run of two or more zero groups becomes `::` (RFC 5952).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j += 1;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const text =
    best.at < 0
      ? groups.join(':')
      : `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.length).join(':')}`;
  return `${text}/${prefix}`;
}

/** One entry: `address/prefix` or a bare address; null when it is not a range, 'host_bits' when bits past it are set. */
function parseNetwork(text: string): Network | 'host_bits' | null {
  const slash = text.indexOf('/');
  const bytes = parseIpAddress(slash < 0 ? text : text.slice(0, slash));
  if (!bytes || (slash >= 0 && text.slice(0, slash).includes('%'))) return null;
  const bits = bytes.length * 8;
  let prefix = bits;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(p)) return null;
    prefix = Number(p);
    // A mapped IPv6 range (`::ffff:10.0.0.0/104`) is read as its IPv4 range.
    if (bytes.length === 4 && text.slice(0, slash).includes(':')) prefix -= 96;
    if (prefix < 0 || prefix > bits) return null;
  }
  for (let bit = prefix; bit < bits; bit += 1) {
    if ((bytes[bit >> 3]! >> (7 - (bit & 7))) & 1) return 'host_bits';
  }
  return { bytes, prefix };
}

function contains(network: Network, address: Bytes): boolean {
  if (network.bytes.length !== address.length) return false;
  for (let bit = 0; bit < network.prefix; bit += 1) {
    const mask = 1 << (7 - (bit & 7));
    if ((network.bytes[bit >> 3]! & mask) !== (address[bit >> 3]! & mask)) return false;
  }
  return true;
}

/** Whether a client address lies in one of the (normalized) ranges; an unreadable address lies in none. */
export function inAllowedNetworks(address: string, networks: readonly string[]): boolean {
  const bytes = parseIpAddress(address);
  if (!bytes) return false;
  return networks.some((text) => {
    const network = parseNetwork(text);
    return typeof network === 'object' && network !== null && contains(network, bytes);
  });
}

/**
 * The lists of who may open the push, read from a schema-valid input (the schema bounded the counts and lengths
 * first): the ranges normalized (`10.1.0.0/16`, `2001:db8::/32`, a bare address its /32 or /128), the addresses as
 * given; messages go to `add` per field.
 */
export function readRecipientAccess(
  push: Pick<PushInput, 'allowed_networks' | 'recipient_emails' | 'authenticated_recipients' | 'notify_emails_to'>,
  add: (field: string, message: string) => void,
): { allowedNetworks: string[]; recipientEmails: string[] } {
  const allowedNetworks: string[] = [];
  for (const entry of push.allowed_networks ?? []) {
    const network = parseNetwork(entry.trim());
    if (network === null) add('allowed_networks', `${RECIPIENT_TEXT.invalidNetwork}: ${entry.slice(0, 49)}`);
    else if (network === 'host_bits') add('allowed_networks', `${RECIPIENT_TEXT.hostBits}: ${entry.slice(0, 49)}`);
    else allowedNetworks.push(formatNetwork(network));
  }
  if (new Set(allowedNetworks).size !== allowedNetworks.length)
    add('allowed_networks', RECIPIENT_TEXT.duplicateNetworks);

  let recipientEmails = (push.recipient_emails ?? []).map((e) => e.trim());
  // Pro's switch: the addresses the link is mailed to are the ones that may open it.
  if (push.authenticated_recipients === true && recipientEmails.length === 0) {
    const notified = (push.notify_emails_to ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    if (notified.length === 0) add('authenticated_recipients', RECIPIENT_TEXT.needsAddresses);
    // notify_emails_to's own rules (count, form, duplicates) report on that field.
    recipientEmails = notified.filter(isPlainAddress).slice(0, MAX_RECIPIENT_EMAILS);
  } else if (recipientEmails.length > 0) {
    if (!recipientEmails.every(isPlainAddress)) add('recipient_emails', RECIPIENT_TEXT.invalidEmail);
    const lower = recipientEmails.map((e) => e.toLowerCase());
    if (new Set(lower).size !== lower.length) add('recipient_emails', RECIPIENT_TEXT.duplicateEmails);
  }
  return { allowedNetworks, recipientEmails };
}

/** Whether `email` is one of the push's addresses (case-insensitive). */
export function isRecipient(email: string, recipients: readonly string[]): boolean {
  const wanted = email.trim().toLowerCase();
  return recipients.some((r) => r.toLowerCase() === wanted);
}

/** A code as typed: digits only (spaces and dashes dropped); null when it cannot be a code. */
export function readAccessCode(text: string | undefined): string | null {
  if (text === undefined) return null;
  const digits = text.replace(/[\s-]/g, '');
  return new RegExp(`^\\d{${ACCESS_CODE_DIGITS}}$`).test(digits) ? digits : null;
}
