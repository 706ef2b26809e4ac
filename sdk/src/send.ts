/**
 * How the facade sends one request through the generated client (client.ts): a timeout, the caller's abort signal,
 * typed errors, and bounded retries of the calls that are safe to repeat.
 */
import type { Client } from './generated/client/index.js';
import type { GeneratedCall, GeneratedResult, RequestOptions, Retry } from './calls.js';
import {
  errorFromResponse,
  NetworkError,
  parseRetryAfter,
  RequestAbortedError,
  SecretPushError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';

export type Send = <T>(
  call: GeneratedCall,
  opts: RequestOptions | undefined,
  retry: Retry,
) => Promise<{ data: T; response: Response }>;

/** One request through the generated client: timeout, abort signal, typed errors, and bounded retries of safe calls. */
export function createSender(
  raw: Client,
  policy: { defaultTimeout: number; maxRetries: number; maxRetryWaitMs: number },
): Send {
  const { defaultTimeout, maxRetries, maxRetryWaitMs } = policy;

  /**
   * One call, with retries by kind: `safe` operations (reads) on 429 and 503; `idempotent` ones (a create with its
   * Idempotency-Key) also after a network error, a timeout and 409 (the first request with the key still running);
   * `never` (views, expiry) not at all.
   */
  async function send<T>(
    call: GeneratedCall,
    opts: RequestOptions | undefined,
    retry: Retry,
  ): Promise<{ data: T; response: Response }> {
    for (let attempt = 0; ; attempt++) {
      let result: GeneratedResult;
      try {
        result = await attemptOnce(call, opts);
      } catch (error) {
        if (retry === 'idempotent' && error instanceof TimeoutError && attempt < maxRetries) continue;
        throw error;
      }
      const { response } = result;
      if (!response) {
        if (retry === 'idempotent' && attempt < maxRetries && !opts?.signal?.aborted) {
          await sleep(Math.min(500 * 2 ** attempt, maxRetryWaitMs), opts?.signal);
          continue;
        }
        throw new NetworkError('network error: no response from the server', { cause: result.error });
      }
      if (!response.ok) {
        const error = errorFromResponse(response, result.error);
        const status = response.status;
        const retried = status === 429 || status === 503 || (retry === 'idempotent' && status === 409);
        if (retry !== 'never' && retried && attempt < maxRetries) {
          const waitMs = retryDelayMs(response, result.error, attempt);
          if (waitMs <= maxRetryWaitMs) {
            await sleep(waitMs, opts?.signal);
            continue;
          }
        }
        throw error;
      }
      if (result.error !== undefined) {
        throw new UnexpectedResponseError(`${response.status}: the response body could not be read`, {
          status: response.status,
          body: result.error,
          requestId: response.headers.get('X-Request-Id') ?? undefined,
          headers: response.headers,
          cause: result.error,
        });
      }
      return { data: result.data as T, response };
    }
  }

  async function attemptOnce(call: GeneratedCall, opts: RequestOptions | undefined): Promise<GeneratedResult> {
    const userSignal = opts?.signal;
    if (userSignal?.aborted) throw new RequestAbortedError('request aborted', { cause: userSignal.reason });
    const controller = new AbortController();
    const timeoutMs = opts?.timeoutMs ?? defaultTimeout;
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
          }, timeoutMs)
        : undefined;
    const onAbort = () => controller.abort(userSignal?.reason);
    userSignal?.addEventListener('abort', onAbort, { once: true });
    try {
      let result: GeneratedResult;
      try {
        result = await call({ client: raw, signal: controller.signal });
      } catch (cause) {
        // The generated client catches fetch failures itself; anything thrown here came from building the request.
        if (cause instanceof SecretPushError) throw cause;
        result = { error: cause };
      }
      if (timedOut) throw new TimeoutError(`request timed out after ${timeoutMs} ms`, { cause: result.error });
      if (userSignal?.aborted) throw new RequestAbortedError('request aborted', { cause: userSignal.reason });
      return result;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      userSignal?.removeEventListener('abort', onAbort);
    }
  }

  function retryDelayMs(response: Response, body: unknown, attempt: number): number {
    const seconds = parseRetryAfter(response.headers, body);
    return seconds !== undefined ? seconds * 1000 : Math.min(500 * 2 ** attempt, maxRetryWaitMs);
  }

  return send;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAbortedError('request aborted', { cause: signal.reason }));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RequestAbortedError('request aborted', { cause: signal?.reason }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
