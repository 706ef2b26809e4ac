/**
 * The shapes every part of the facade shares: a method's options, a paged list, and one generated call with its
 * retry class. They sit below client.ts, requests.ts and webhook-methods.ts, which all use them, so that the client
 * can assemble the others without an import circle (ARCHITECTURE.md, "Floors").
 */
import type { Client } from './generated/client/index.js';
import type { Page } from './pagination.js';

/** Options every method takes. */
export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
}

/** An async iterable list whose `page(n)` reads one page. */
export interface PagedList<T, Args extends unknown[] = [], Options = RequestOptions> {
  (...args: [...Args, options?: Options]): AsyncIterable<T>;
  page(...args: [...Args, page: number, options?: Options]): Promise<Page<T>>;
}

export interface GeneratedResult {
  data?: unknown;
  error?: unknown;
  response?: Response;
}

export type GeneratedCall = (extra: { client: Client; signal: AbortSignal }) => Promise<GeneratedResult>;

export type Retry = 'safe' | 'idempotent' | 'never';
