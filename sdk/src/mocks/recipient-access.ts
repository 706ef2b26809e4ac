/**
 * Who may open a push (issue 42), as the stateful mock keeps it: the one-time codes it "mails" into its outbox, their
 * limits per push and per client address, and single use. The rules (lists, matching, limits, lifetimes) are the
 * shared ones the server applies (`@secret-push/rules`, recipient-access.ts).
 */
import {
  ACCESS_CODE_DIGITS,
  ACCESS_CODE_SECONDS,
  ACCESS_CODE_WINDOW_SECONDS,
  ACCESS_CODES_PER_CLIENT,
  ACCESS_CODES_PER_PUSH,
  ApiError,
  isExpired,
  isPlainAddress,
  isRecipient,
  validationFailed,
  type PushState,
} from '@secret-push/rules';

interface MockCode {
  code: string;
  expiresAt: number;
  used: boolean;
}

function randomCode(): string {
  const values = crypto.getRandomValues(new Uint32Array(1));
  return String(values[0]! % 10 ** ACCESS_CODE_DIGITS).padStart(ACCESS_CODE_DIGITS, '0');
}

export class MockAccessCodes {
  private codes = new Map<string, MockCode[]>();
  private asked: { at: number; ip: string; urlToken: string }[] = [];

  /**
   * `requestAccessCode`: the server's checks in its order; the code and the listed address to mail it to, or null
   * when the address is not listed (the same answer for the caller).
   */
  request(
    state: PushState,
    email: string,
    ip: string,
    now: number,
    canMail: boolean,
  ): { code: string; to: string } | null {
    const address = email.trim();
    if (!isPlainAddress(address)) throw validationFailed({ email: ['is invalid'] });
    if (state.recipientEmails.length === 0 || isExpired(state, new Date(now)) || !canMail) {
      throw validationFailed({ email: ['cannot be used for this push'] });
    }
    const since = now - ACCESS_CODE_WINDOW_SECONDS * 1000;
    this.asked = this.asked.filter((a) => a.at > since);
    const forPush = this.asked.filter((a) => a.urlToken === state.urlToken);
    const forClient = this.asked.filter((a) => a.ip === ip);
    const full =
      forPush.length >= ACCESS_CODES_PER_PUSH
        ? forPush
        : forClient.length >= ACCESS_CODES_PER_CLIENT
          ? forClient
          : null;
    if (full) {
      throw new ApiError('rate_limited', 'Too many access code requests; try again later.', {
        retryAfterSeconds: Math.max(1, Math.ceil((full[0]!.at - since) / 1000)),
      });
    }
    this.asked.push({ at: now, ip, urlToken: state.urlToken });
    const to = state.recipientEmails.find((r) => isRecipient(address, [r]));
    if (!to) return null;
    const code = randomCode();
    const list = this.codes.get(state.urlToken) ?? [];
    list.push({ code, expiresAt: now + ACCESS_CODE_SECONDS * 1000, used: false });
    this.codes.set(state.urlToken, list);
    return { code, to };
  }

  /** Whether the code opens this push now; a right one is used up. */
  use(urlToken: string, code: string, now: number): boolean {
    const found = (this.codes.get(urlToken) ?? []).find((c) => !c.used && c.expiresAt > now && c.code === code);
    if (found) found.used = true;
    return found !== undefined;
  }

  clear(): void {
    this.codes.clear();
    this.asked = [];
  }
}
