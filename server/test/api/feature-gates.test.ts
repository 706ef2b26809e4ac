/**
 * Issue 39, "errors that name their fix": every optional feature of `FEATURE_GATES` (rules/src/feature-gates.ts) is
 * turned off on a real server (createApp over createCore on the test database), used through the generated SDK's
 * facade or the pages, and the refusal must name the setting that turns it on: in production the setting and its
 * value (`PWPUSH_WEBHOOKS=true`), in development also the exact line to add to the server's environment. The table
 * must hold a probe for every gate, so a new gate without one fails here.
 */
import { generate } from 'otplib';
import { createSecretPushClient, SecretPushError, sealPush } from '@secret-push/sdk';
import { createPush as genCreatePush } from '@secret-push/sdk/generated';
import { FEATURE_GATES, type FeatureGate } from '@secret-push/rules';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/config/settings.js';
import { startWeb, Visitor, type WebApp } from '../web/support.js';

type Env = 'development' | 'production';

/** Three instances per environment, between them with every gate off. */
const INSTANCES = {
  /** Anonymous access, kinds, end-to-end encryption, requests, email, webhooks, sign-up and single sign-on: off. */
  off: {
    allowAnonymous: false,
    enableFilePushes: false,
    enableUrlPushes: false,
    enableQrPushes: false,
    clientEncryption: { enabled: false, default: false, required: false },
    enableRequests: false,
    enableSignups: false,
    oidc: null,
    webhooks: { enabled: false, allowPrivate: false, retrySchedule: [5] },
  },
  /** Files need a token, only encrypted pushes, email with links off, passwords off. */
  other: {
    filesRequireAuth: true,
    clientEncryption: { enabled: true, default: true, required: true },
    oidc: {
      issuer: 'https://id.example.org/realms/main',
      clientId: 'secret-push',
      clientSecret: 'a client secret of the test instance',
      allowedDomains: [],
      autoCreate: true,
      only: true,
      providerName: 'Example ID',
      allowHttp: false,
      emailVerifiedClaim: 'email_verified',
    },
  },
  /** A second factor required of password accounts. */
  strict: { require2fa: true },
} satisfies Record<string, Partial<Settings>>;

interface Answer {
  status: number;
  text: string;
}

interface Probe {
  gate: FeatureGate;
  instance: keyof typeof INSTANCES;
  what: string;
  status: number;
  run(x: { app: WebApp; token: string }): Promise<Answer>;
}

/** The facade's error for a call expected to fail, as status and text (`<status> <code>: <error>`). */
async function refusal(call: Promise<unknown>): Promise<Answer> {
  const error: unknown = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof SecretPushError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { status: error.status ?? 0, text: error.message };
}

async function page(app: WebApp, pathname: string, visitor = new Visitor(app.baseUrl)): Promise<Answer> {
  const response = await visitor.fetch(pathname);
  return { status: response.status, text: await response.text() };
}

const client = (app: WebApp, token?: string) => createSecretPushClient({ baseUrl: app.baseUrl, token, maxRetries: 0 });

const PROBES: Probe[] = [
  {
    gate: 'anonymousPushes',
    instance: 'off',
    what: 'an anonymous create',
    status: 401,
    run: ({ app }) => refusal(client(app).createPush({ payload: 'hunter2' })),
  },
  {
    gate: 'anonymousFiles',
    instance: 'other',
    what: 'an anonymous file push',
    status: 401,
    run: ({ app }) =>
      refusal(
        client(app).createPush({
          kind: 'file',
          files: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=' }],
        }),
      ),
  },
  ...(
    [
      ['filePushes', 'file'],
      ['urlPushes', 'url'],
      ['qrPushes', 'qr'],
    ] as const
  ).map(([gate, kind]): Probe => ({
    gate,
    instance: 'off',
    what: `a ${kind} push`,
    status: 422,
    run: ({ app, token }) =>
      refusal(
        client(app, token).createPush(
          kind === 'file'
            ? { kind, files: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=' }] }
            : { kind, payload: 'https://example.org/' },
        ),
      ),
  })),
  {
    gate: 'clientEncryption',
    instance: 'off',
    what: 'an end-to-end encrypted push',
    status: 422,
    async run({ app, token }) {
      const sealed = await sealPush({ payload: 'hunter2' });
      const { error, response } = await genCreatePush({
        client: client(app, token).raw,
        body: { push: sealed.push },
      });
      return { status: response?.status ?? 0, text: (error as { error: string }).error };
    },
  },
  {
    gate: 'plainPushes',
    instance: 'other',
    what: 'an ordinary push where encryption is required',
    status: 422,
    run: ({ app, token }) => refusal(client(app, token).createPush({ payload: 'hunter2' })),
  },
  {
    gate: 'requests',
    instance: 'off',
    what: 'a request',
    status: 404,
    run: ({ app, token }) => refusal(client(app, token).createRequest({ request: 'the password, please' })),
  },
  {
    gate: 'email',
    instance: 'off',
    what: 'notify_emails_to on a create',
    status: 422,
    run: ({ app, token }) =>
      refusal(client(app, token).createPush({ payload: 'hunter2', notify_emails_to: 'kate@example.org' })),
  },
  {
    gate: 'notifyByEmail',
    instance: 'other',
    what: 'notifyEmails with a relay but links off',
    status: 404,
    run: ({ app, token }) => refusal(client(app, token).notifyEmails('no-such-push', { to: 'kate@example.org' })),
  },
  {
    gate: 'webhooks',
    instance: 'off',
    what: 'the webhook list',
    status: 404,
    run: ({ app, token }) => refusal(client(app, token).listWebhooks()),
  },
  {
    gate: 'signUp',
    instance: 'off',
    what: 'the sign-up page',
    status: 403,
    run: ({ app }) => page(app, '/users/sign_up'),
  },
  {
    gate: 'passwordSignIn',
    instance: 'other',
    what: 'the sign-up page while only the provider signs in',
    status: 403,
    run: ({ app }) => page(app, '/users/sign_up'),
  },
  {
    gate: 'singleSignOn',
    instance: 'off',
    what: '"Sign in with …" without a provider',
    status: 404,
    async run({ app }) {
      const visitor = new Visitor(app.baseUrl);
      const { csrf } = await visitor.page('/users/sign_in');
      const response = await visitor.post('/users/oidc/start', { _csrf: csrf });
      return { status: response.status, text: await response.text() };
    },
  },
  {
    gate: 'optionalTwoFactor',
    instance: 'strict',
    what: 'turning the second factor off where it is required',
    status: 403,
    async run({ app }) {
      // Sign-up sends the visitor to enrol first (no session before); enrolled, they may not turn it off.
      const visitor = new Visitor(app.baseUrl);
      const signUp = await visitor.signUp(
        `gates-${app.settings.env}@example.org`,
        'correct horse battery staple fjord',
      );
      expect(signUp.headers.get('location')).toBe('/users/two_factor/setup');
      const { html } = await visitor.page('/users/two_factor/setup');
      const secret = /id="totp-secret">([^<]+)</.exec(html)![1]!.replace(/\s/g, '');
      const { csrf } = await visitor.page('/users/two_factor/setup');
      const code = () => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
      expect((await visitor.post('/users/two_factor/confirm', { _csrf: csrf, code: await code() })).status).toBe(200);
      const page = await visitor.page('/users/two_factor');
      const response = await visitor.post('/users/two_factor/disable', { _csrf: page.csrf, code: await code() });
      return { status: response.status, text: await response.text() };
    },
  },
];

describe('every optional feature that is off names the setting that turns it on', () => {
  it('has a probe for every gate', () => {
    expect(new Set(PROBES.map((p) => p.gate))).toEqual(new Set(Object.keys(FEATURE_GATES)));
  });

  describe.each(['development', 'production'] as Env[])('in %s', (env) => {
    const apps = {} as Record<keyof typeof INSTANCES, WebApp>;
    const tokens = {} as Record<keyof typeof INSTANCES, string>;

    beforeAll(async () => {
      apps.off = await startWeb({ ...INSTANCES.off, env });
      // With a relay (never reached: nothing is sent) and links by email off.
      apps.other = await startWeb({
        ...INSTANCES.other,
        env,
        mail: { ...apps.off.settings.mail, smtpUrl: 'smtp://127.0.0.1:9', notifyByEmail: false },
      });
      apps.strict = await startWeb({ ...INSTANCES.strict, env }, { db: apps.off.db });
      for (const name of ['off', 'other'] as const) {
        tokens[name] = (await apps[name].core.users.createUser(`owner-${name}-${env}@example.org`)).token;
      }
    }, 120_000);

    afterAll(async () => {
      await apps.strict?.stop();
      await apps.other?.stop();
      await apps.off?.stop();
    });

    it.each(PROBES.map((p) => [p.gate, p] as const))('%s', async (gate, probe) => {
      const answer = await probe.run({ app: apps[probe.instance], token: tokens[probe.instance] ?? '' });
      const { variable, value } = FEATURE_GATES[gate];
      expect(answer.status, `${probe.what}: ${answer.text.slice(0, 300)}`).toBe(probe.status);
      expect(answer.text, probe.what).toContain(variable);
      if (env === 'development') {
        expect(answer.text, probe.what).toContain(`add the line ${variable}=${value} to the server`);
      } else {
        expect(answer.text, probe.what).toContain(`operator turns this on with ${variable}`);
        expect(answer.text, probe.what).not.toContain('scripts/start');
      }
    });
  });
});
