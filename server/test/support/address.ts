/**
 * A loopback server that listens before its app exists, so that the app's settings can name its own address: an
 * instance with an SMTP relay needs PWPUSH_PUBLIC_BASE_URL (links in email are built only from it, never from a
 * request's Host header), and in tests that is the instance's own ephemeral address.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Settings } from '../../src/core.js';

export async function reserveAddress(): Promise<{ server: Server; baseUrl: string }> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The overrides, with the instance's own address as its public base URL when it has a relay and was given none. */
export function withOwnBase(overrides: Partial<Settings>, baseUrl: string): Partial<Settings> {
  return overrides.mail?.smtpUrl && overrides.publicBaseUrl === undefined
    ? { ...overrides, publicBaseUrl: baseUrl }
    : overrides;
}
