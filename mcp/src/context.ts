/**
 * What every tool works with: the SDK client of the one configured instance, its version report (asked once), the
 * sealed requests' keys, and the log (one line per call: the tool, the outcome, the time; never an argument or a
 * result).
 */
import type { RequestKeyStore } from '@secret-push/cli';
import { generateRequestKeyPair, parseShareLink, type SecretPushClient, type VersionReport } from '@secret-push/sdk';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { failed, ToolRefusal } from './results.js';

export interface ToolContext {
  client: SecretPushClient;
  /** The instance every request goes to. */
  baseUrl: string;
  version(): Promise<VersionReport>;
  /** Keeps and finds the key pairs of sealed requests. */
  keys: KeyKeeper;
  log(line: string): void;
}

export interface KeyKeeper {
  create(): Promise<{ keyPair: CryptoKeyPair; publicKey: { kty: 'OKP'; crv: 'X25519'; x: string } }>;
  save(urlToken: string, pair: Awaited<ReturnType<KeyKeeper['create']>>): Promise<void>;
  load(urlToken: string): Promise<CryptoKeyPair | null>;
  remove(urlToken: string): Promise<void>;
}

/** The CLI's key store (shared with `secret-push request collect`), or keys held in this process only. */
export function keyKeeper(store: RequestKeyStore | undefined, baseUrl: string): KeyKeeper {
  if (store) {
    return {
      create: () => store.create(),
      save: async (urlToken, pair) => void (await store.save(baseUrl, urlToken, pair)),
      load: (urlToken) => store.load(urlToken),
      remove: (urlToken) => store.remove(urlToken),
    };
  }
  const held = new Map<string, CryptoKeyPair>();
  return {
    create: () => generateRequestKeyPair(),
    save: async (urlToken, pair) => void held.set(urlToken, pair.keyPair),
    load: async (urlToken) => held.get(urlToken) ?? null,
    remove: async (urlToken) => void held.delete(urlToken),
  };
}

const TOKEN = /^[A-Za-z0-9_-]{6,64}$/;

/** A push's token from a token or a share link of this instance; a link of another instance is refused. */
export function pushToken(ctx: ToolContext, text: string): { urlToken: string; link: string | undefined } {
  if (TOKEN.test(text)) return { urlToken: text, link: undefined };
  let parsed: ReturnType<typeof parseShareLink>;
  try {
    parsed = parseShareLink(text);
  } catch {
    throw new ToolRefusal('not a push link (https://…/p/<token>) or a url_token', 'bad_link');
  }
  sameInstance(ctx, new URL(parsed.pageUrl).origin);
  return { urlToken: parsed.urlToken, link: text };
}

/** A request's token from a token or a request link (`/r/<token>`) of this instance. */
export function requestToken(ctx: ToolContext, text: string): string {
  if (TOKEN.test(text)) return text;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const match = url ? /\/r\/([A-Za-z0-9_-]{6,64})\/?$/.exec(url.pathname) : null;
  if (!url || !match) throw new ToolRefusal('not a request link (https://…/r/<token>) or a request token', 'bad_link');
  sameInstance(ctx, url.origin);
  return match[1]!;
}

function sameInstance(ctx: ToolContext, origin: string): void {
  if (origin !== new URL(ctx.baseUrl).origin)
    throw new ToolRefusal(
      `that link is of ${origin}; this server talks only to ${new URL(ctx.baseUrl).origin}`,
      'other_instance',
    );
}

/** Runs a tool's body: its result, or its failure as a tool error; one log line either way. */
export async function logged(ctx: ToolContext, tool: string, body: () => Promise<CallToolResult>) {
  const started = Date.now();
  try {
    const result = await body();
    ctx.log(`${tool} ok ${Date.now() - started}ms`);
    return result;
  } catch (error) {
    const { result, code } = failed(error);
    ctx.log(`${tool} failed (${code}) ${Date.now() - started}ms`);
    return result;
  }
}
