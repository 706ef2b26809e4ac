/** Small helpers around the generated SDK's results (which resolve, never throw, on HTTP errors). */
import { expect } from 'vitest';

interface SdkResult<D, E> {
  data?: D;
  error?: E;
  response?: Response;
}

/** The status of an SDK result; fails the test on a network error (the client then has no response). */
export function status<D, E>(result: SdkResult<D, E>): number {
  if (!result.response) throw new Error(`no response: ${JSON.stringify(result.error)}`);
  return result.response.status;
}

/** Asserts the status and returns the data. */
export function expectData<D, E>(result: SdkResult<D, E>, expected = 200): D {
  expect({ status: status(result), error: result.error }).toEqual({ status: expected, error: undefined });
  return result.data as D;
}

/** Asserts an error status and code; returns the ErrorResponse. */
export function expectError<D, E extends { code: string }>(result: SdkResult<D, E>, expected: number, code: string): E {
  expect({ status: status(result), code: result.error?.code }).toEqual({ status: expected, code });
  return result.error as E;
}

/** An SDK `auth` that fills only the bearer scheme (a plain string would also fill both legacy headers). */
export function bearer(token: string) {
  return (auth: { scheme?: string }) => (auth.scheme === 'bearer' ? token : undefined);
}
