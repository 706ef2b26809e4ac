/**
 * The part of `oidc-provider` (9.x, which ships no types) that the single sign-on test uses: a provider built from
 * its configuration, its Koa middleware stack, and its request listener.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface KoaContext {
    path: string;
    body: unknown;
  }

  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients: Record<string, unknown>[];
    jwks?: { keys: object[] };
    cookies: { keys: string[] };
    claims?: Record<string, string[]>;
    findAccount?(ctx: KoaContext, id: string): Account | undefined | Promise<Account | undefined>;
    features?: Record<string, { enabled: boolean }>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
