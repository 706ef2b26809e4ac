import type { ServerEnv } from './feature-gates.js';

/**
 * The instance settings the push rules read (the server's `PWPUSH_*` settings, the mock's options), the spec's
 * widest bounds, and the defaults of an instance that sets nothing.
 */

/** Bounds an instance applies to an expiry field; always inside the spec's widest bounds. */
export interface Bounds {
  default: number;
  min: number;
  max: number;
}

export interface PushRuleSettings {
  /** Where the instance runs: a refusal of a feature that is off names its setting, outside production with the line. */
  env?: ServerEnv | undefined;
  allowAnonymous: boolean;
  enableFilePushes: boolean;
  enableUrlPushes: boolean;
  enableQrPushes: boolean;
  filesRequireAuth: boolean;
  fileMaxCount: number;
  /** Largest file in bytes after decoding. */
  fileMaxBytes: number;
  expireAfterDays: Bounds;
  /**
   * The shortest `expire_after_duration` under a day accepted (0 = 15 minutes … 6 = nothing under a day;
   * `PWPUSH_EXPIRE_AFTER_DURATION_MIN`). Durations of a day or more follow `expireAfterDays`.
   */
  expireAfterDurationMin: number;
  expireAfterViews: Bounds;
  deletableByViewerDefault: boolean;
  retrievalStepDefault: boolean;
  /** Failed passphrase attempts per push within ATTEMPT_WINDOW_MS before 429. */
  passphraseAttemptsPerMinute: number;
  /** End-to-end encrypted pushes (`features.pushes.client_encryption`): accepted, the pages' default, required. */
  clientEncryption: ClientEncryptionSetting;
}

/**
 * The operator's choice about end-to-end encrypted pushes. `required` implies `default`, which implies `enabled`
 * (`clientEncryptionSetting` builds a consistent one from a mode).
 */
export interface ClientEncryptionSetting {
  enabled: boolean;
  default: boolean;
  required: boolean;
}

/** `PWPUSH_CLIENT_ENCRYPTION`'s values, weakest first. */
export const CLIENT_ENCRYPTION_MODES = ['off', 'allowed', 'default', 'required'] as const;
export type ClientEncryptionMode = (typeof CLIENT_ENCRYPTION_MODES)[number];

export function clientEncryptionSetting(mode: ClientEncryptionMode): ClientEncryptionSetting {
  const rank = CLIENT_ENCRYPTION_MODES.indexOf(mode);
  return { enabled: rank >= 1, default: rank >= 2, required: rank >= 3 };
}

/** The schemes (and versions) of `client_encryption` this implementation accepts. */
export const CLIENT_ENCRYPTION_SCHEMES: readonly { scheme: 'aes-256-gcm'; version: 1 }[] = [
  { scheme: 'aes-256-gcm', version: 1 },
];

/** Widest bounds the spec allows; an instance may only narrow them. */
export const SPEC_LIMITS = {
  expireAfterDays: { min: 1, max: 90, default: 7 },
  expireAfterViews: { min: 1, max: 100, default: 5 },
  fileMaxCount: 10,
  fileMaxBytes: 10 * 1024 * 1024,
} as const;

/** An instance that sets nothing (the decisions' defaults). */
export const DEFAULT_PUSH_RULE_SETTINGS: PushRuleSettings = {
  allowAnonymous: true,
  enableFilePushes: true,
  enableUrlPushes: true,
  enableQrPushes: true,
  filesRequireAuth: true,
  fileMaxCount: SPEC_LIMITS.fileMaxCount,
  fileMaxBytes: SPEC_LIMITS.fileMaxBytes,
  expireAfterDays: { ...SPEC_LIMITS.expireAfterDays },
  expireAfterDurationMin: 0,
  expireAfterViews: { ...SPEC_LIMITS.expireAfterViews },
  deletableByViewerDefault: true,
  retrievalStepDefault: false,
  passphraseAttemptsPerMinute: 5,
  clientEncryption: clientEncryptionSetting('allowed'),
};
