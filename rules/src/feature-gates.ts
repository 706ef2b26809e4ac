/**
 * The settings that turn an optional feature on, and how a refusal names them (issue 39: every "feature off" answer
 * names its fix). A refusal's text ends with `turnOn(gate, env)`: in production the setting (`PWPUSH_WEBHOOKS=true`),
 * elsewhere (development, tests, the mock) also where to put it, so the person at the keyboard can copy the line. The
 * server's own settings table (server/src/config/settings.ts) documents each variable; server/test/docs/feature-gates
 * .test.ts turns each gate off on a real server and checks that the refusal names it.
 */

/** The environments a server runs in (`PWPUSH_ENV`); undefined for implementations that have none (the mock). */
export type ServerEnv = 'development' | 'production' | 'test';

interface Gate {
  /** The setting that turns the feature on. */
  readonly variable: string;
  /** Its value that does (an example for settings that take an address). */
  readonly value: string;
  /** In production, how the value reads when it is not a literal (an address of the operator's). */
  readonly productionValue?: string;
}

export const FEATURE_GATES = {
  anonymousPushes: { variable: 'PWPUSH_ALLOW_ANONYMOUS', value: 'true' },
  anonymousFiles: { variable: 'PWPUSH_FILES_REQUIRE_AUTH', value: 'false' },
  filePushes: { variable: 'PWPUSH_ENABLE_FILE_PUSHES', value: 'true' },
  urlPushes: { variable: 'PWPUSH_ENABLE_URL_PUSHES', value: 'true' },
  qrPushes: { variable: 'PWPUSH_ENABLE_QR_PUSHES', value: 'true' },
  /** End-to-end encrypted pushes (off: refused). */
  clientEncryption: { variable: 'PWPUSH_CLIENT_ENCRYPTION', value: 'allowed' },
  /** Ordinary pushes, refused while end-to-end encryption is required. */
  plainPushes: { variable: 'PWPUSH_CLIENT_ENCRYPTION', value: 'default' },
  requests: { variable: 'PWPUSH_ENABLE_REQUESTS', value: 'true' },
  email: {
    variable: 'PWPUSH_SMTP_URL',
    value: 'smtp://localhost:1025',
    productionValue: 'smtps://user:password@your-relay:465',
  },
  notifyByEmail: { variable: 'PWPUSH_NOTIFY_BY_EMAIL', value: 'true' },
  webhooks: { variable: 'PWPUSH_WEBHOOKS', value: 'true' },
  signUp: { variable: 'PWPUSH_ENABLE_SIGNUPS', value: 'true' },
  passwordSignIn: { variable: 'PWPUSH_OIDC_ONLY', value: 'false' },
  singleSignOn: {
    variable: 'PWPUSH_OIDC_ISSUER',
    value: 'https://id.example.org/realms/main',
    productionValue: "your provider's issuer URL, with PWPUSH_OIDC_CLIENT_ID and PWPUSH_OIDC_CLIENT_SECRET",
  },
  optionalTwoFactor: { variable: 'PWPUSH_REQUIRE_2FA', value: 'false' },
} as const satisfies Record<string, Gate>;

export type FeatureGate = keyof typeof FEATURE_GATES;

/**
 * The sentence that ends a refusal of a feature that is off: which setting turns it on, and outside production the
 * exact line to add to the server's environment. Never a value of the instance's own settings.
 */
export function turnOn(gate: FeatureGate, env: ServerEnv | undefined): string {
  const g: Gate = FEATURE_GATES[gate];
  if (env === 'production') {
    const value = g.productionValue === undefined ? `=${g.value}` : ` (${g.productionValue})`;
    return `The instance's operator turns this on with ${g.variable}${value}.`;
  }
  return (
    `To turn this on, add the line ${g.variable}=${g.value} to the server's environment and restart it ` +
    `(e.g. ${g.variable}=${g.value} scripts/start).`
  );
}
