import { expect } from 'vitest';
import { SecretPushError } from '../../src/index.js';

/** The SDK error a call fails with; fails the test when the call succeeds or throws anything else. */
export async function failure(promise: Promise<unknown>): Promise<SecretPushError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SecretPushError);
    return error as SecretPushError;
  }
  throw new Error('expected the call to fail, and it succeeded');
}
