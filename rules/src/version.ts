/** The version report (api-decisions.md "Version report"), from the instance's settings. */
import type { VersionReport } from './generated/types.gen.js';
import { acceptedDurations } from './durations.js';
import { API_KEY_SCOPES } from './scopes.js';
import { MAX_ALLOWED_NETWORKS, MAX_RECIPIENT_EMAILS } from './recipient-access.js';
import { CLIENT_ENCRYPTION_SCHEMES, type PushRuleSettings } from './settings.js';

export const API_VERSION = '2.1';

/** The scheme of a request's sealed answers (the contract's "Requests, sealed answers"). */
export const SEALING_SCHEME = 'hpke-x25519-sha256-aes256gcm';

/** What an implementation offers beyond the settings (the mock does not keep idempotency keys; the server does). */
export interface ImplementationFeatures {
  /** Hours an Idempotency-Key is remembered; absent when keys are not honoured. */
  idempotencyKeyHours?: number;
  /** The storage quotas in bytes (null: off); absent when the implementation keeps none (the mock). */
  storageQuotas?: { anonymousBytesPerHour: number | null; userActiveBytes: number | null };
  /** Whether requests (`/api/v2/requests`) are served; absent: not implemented (reported off). */
  requests?: boolean;
  /** Whether API keys with scopes are offered (every scope of the contract's list). */
  apiKeys?: boolean;
  /** Whether the link can be emailed to recipients (an SMTP relay configured and the feature on); default false. */
  emailAutoDispatch?: boolean;
  /** Whether workspaces are served (`/api/v2/workspaces`, `/api/v2/accounts`, ids on creates and lists). */
  workspaces?: boolean;
  /** Webhooks and read receipts by email; absent when the implementation has none (the mock). */
  webhooks?: { enabled: boolean; readReceipts: boolean };
  /** Who may open a push (issue 42): codes by email (a relay), single sign-on as a listed address; absent: none. */
  recipientAccess?: { emailCodes: boolean; singleSignOn: boolean };
}

export function versionReport(
  settings: Pick<
    PushRuleSettings,
    | 'allowAnonymous'
    | 'enableFilePushes'
    | 'filesRequireAuth'
    | 'enableUrlPushes'
    | 'enableQrPushes'
    | 'clientEncryption'
    | 'expireAfterDays'
    | 'expireAfterDurationMin'
  >,
  applicationVersion: string,
  features: ImplementationFeatures = {},
): VersionReport {
  const durations = acceptedDurations(settings);
  return {
    application_version: applicationVersion,
    api_version: API_VERSION,
    edition: 'oss',
    features: {
      anonymous_access: settings.allowAnonymous,
      api_token_authentication: true,
      accounts: { enabled: features.workspaces === true },
      ...(features.workspaces ? { workspaces: { enabled: true } } : {}),
      pushes: {
        enabled: true,
        email_auto_dispatch: features.emailAutoDispatch ?? false,
        file_attachments: { enabled: settings.enableFilePushes, requires_authentication: settings.filesRequireAuth },
        url_pushes: { enabled: settings.enableUrlPushes },
        qr_code_pushes: { enabled: settings.enableQrPushes },
        // Honoured exactly; an instance whose days bounds leave no value of the enum honours none of them.
        expire_after_duration: {
          enabled: durations.length > 0,
          min: durations[0] ?? settings.expireAfterDurationMin,
          values: durations,
        },
        ...(features.idempotencyKeyHours
          ? { idempotency_keys: { enabled: true, lifetime_hours: features.idempotencyKeyHours } }
          : {}),
        client_encryption: {
          enabled: settings.clientEncryption.enabled,
          default: settings.clientEncryption.default,
          required: settings.clientEncryption.required,
          schemes: settings.clientEncryption.enabled ? CLIENT_ENCRYPTION_SCHEMES.map((s) => ({ ...s })) : [],
        },
        ...(features.recipientAccess
          ? {
              recipient_access: {
                networks: true,
                email_codes: features.recipientAccess.emailCodes,
                single_sign_on: features.recipientAccess.singleSignOn,
                max_emails:
                  features.recipientAccess.emailCodes || features.recipientAccess.singleSignOn
                    ? MAX_RECIPIENT_EMAILS
                    : 0,
                max_networks: MAX_ALLOWED_NETWORKS,
              },
            }
          : {}),
      },
      requests: {
        enabled: features.requests === true,
        // The requests' emails go out exactly when the pushes' links do (an SMTP relay and the feature on).
        email_auto_dispatch: features.requests === true && (features.emailAutoDispatch ?? false),
        sealed_answers: features.requests === true && settings.clientEncryption.enabled ? [SEALING_SCHEME] : [],
      },
      ...(features.apiKeys ? { api_keys: { enabled: true, scopes: [...API_KEY_SCOPES] } } : {}),
      ...(features.webhooks
        ? { webhooks: { enabled: features.webhooks.enabled, read_receipts: features.webhooks.readReceipts } }
        : {}),
      ...(features.storageQuotas
        ? {
            storage_quotas: {
              anonymous_bytes_per_hour: features.storageQuotas.anonymousBytesPerHour,
              user_active_bytes: features.storageQuotas.userActiveBytes,
            },
          }
        : {}),
    },
  };
}
