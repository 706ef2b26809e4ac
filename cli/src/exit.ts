/**
 * Exit codes (documented in cli/README.md, "Exit codes", and by `secret-push help exit-codes`) and the one mapping
 * from a failure to a code and a message. Messages never carry a secret: the SDK's errors quote the server's message
 * and code only (the server never puts a secret in them), and ours never quote a link, a key or an input.
 */
import {
  AuthenticationError,
  BadRequestError,
  EndToEndError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PassphraseError,
  PayloadTooLargeError,
  RateLimitError,
  RequestAbortedError,
  SecretPushError,
  ServiceUnavailableError,
  ValidationError,
} from '@secret-push/sdk';

export const EXIT = {
  /** Done. */
  ok: 0,
  /** Anything not listed below (a server error, an unexpected answer, a local file that cannot be written). */
  failure: 1,
  /** The command line is wrong (unknown command or option, a missing or malformed argument). */
  usage: 2,
  /** No server configured, or a config file that is unreadable or readable by other users. */
  config: 3,
  /** The server refused the credentials (401) or the action (403). */
  auth: 4,
  /** Not found (404), expired, deleted or closed (410), or a request not answered yet. */
  notFound: 5,
  /** A passphrase is needed, or was wrong, or too many wrong ones were tried. */
  passphrase: 6,
  /** The server refused the input (400, 413, 422), or the input is too large to send. */
  invalid: 7,
  /** Rate limited or over a storage quota (429). */
  limited: 8,
  /** No answer: the server is unreachable, timed out, or unavailable (503). */
  unavailable: 9,
  /** End-to-end encryption: the link has no key or a wrong one, or the instance does not offer it. */
  encryption: 10,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI itself reports: a message for people and the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage, 'usage');

/** The exit code of any failure. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof PassphraseError) return EXIT.passphrase;
  if (error instanceof RateLimitError) return error.code === 'too_many_attempts' ? EXIT.passphrase : EXIT.limited;
  if (error instanceof AuthenticationError || error instanceof ForbiddenError) return EXIT.auth;
  if (error instanceof NotFoundError || (error instanceof SecretPushError && error.status === 410))
    return EXIT.notFound;
  if (error instanceof ValidationError || error instanceof PayloadTooLargeError || error instanceof BadRequestError)
    return EXIT.invalid;
  if (error instanceof NetworkError || error instanceof ServiceUnavailableError) return EXIT.unavailable;
  if (error instanceof RequestAbortedError) return EXIT.interrupted;
  if (error instanceof EndToEndError) return EXIT.encryption;
  return EXIT.failure;
}

/** What to print for a failure: the message, and the per-field messages of a 422. */
export function describeError(error: unknown): { message: string; code: string | undefined; fields?: string[] } {
  if (error instanceof ValidationError && Object.keys(error.errors).length > 0) {
    const fields = Object.entries(error.errors).flatMap(([field, messages]) => messages.map((m) => `${field}: ${m}`));
    return { message: error.message, code: error.code, fields };
  }
  if (error instanceof SecretPushError) {
    const hint = hintFor(error);
    return { message: hint ? `${error.message} (${hint})` : error.message, code: error.code };
  }
  if (error instanceof CliError) return { message: error.message, code: error.code };
  // Not ours and not the SDK's: a bug or the platform. Its name and message only (never a stack or an input).
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { message, code: undefined };
}

function hintFor(error: SecretPushError): string | undefined {
  if (error instanceof AuthenticationError && error.code === 'authentication_required')
    return 'this needs a token: set SECRET_PUSH_TOKEN or add one to a profile (secret-push config add)';
  if (error instanceof AuthenticationError)
    return 'the token was refused: check SECRET_PUSH_TOKEN or the profile (secret-push config list)';
  if (error instanceof NetworkError) return 'is the server address right? check SECRET_PUSH_URL or --server';
  return undefined;
}
