/**
 * Issue 42: mails carry the brand the pages carry. An instance with every mail-facing PWPUSH_BRAND_* setting sends a
 * push's link and a request's link through a real SMTP server (test/support/mailbox.ts): the button in the brand's
 * accent, the footer line and the imprint and privacy links in both parts, the instance's name, and still never the
 * secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandSettings } from '../../src/config/brand-settings.js';
import { translator } from '../../src/i18n/i18n.js';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { startMailbox, type Mailbox } from '../support/mailbox.js';

const FAST_QUEUE = { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1 };
const FOOTER = 'Acme Corp · 1 Example Street · Springfield';

let mailbox: Mailbox;
let api: RealApi;
let owner: { token: string; email: string; userId: string };

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      publicBaseUrl: 'https://secrets.acme.example',
      mail: {
        smtpUrl: mailbox.url,
        from: 'Acme Secrets <no-reply@secrets.acme.example>',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Acme Secrets',
        attempts: 3,
        retrySeconds: 1,
      },
      brand: brandSettings(
        {
          PWPUSH_BRAND_ACCENT_COLOR: '#7A1F5C',
          PWPUSH_BRAND_FOOTER_TEXT: FOOTER,
          PWPUSH_BRAND_IMPRINT_URL: 'https://acme.example/imprint',
          PWPUSH_BRAND_PRIVACY_URL: 'https://acme.example/privacy',
        },
        'Acme Secrets',
      ),
    },
    { core: { queue: FAST_QUEUE } },
  );
  owner = await api.user('owner@acme.example');
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

async function post(path: string, body: unknown) {
  const made = await api.raw(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify(body),
  });
  expect(made.status).toBe(201);
  return made.body as { html_url: string };
}

/** The brand's look and footer, its links named in the mail's language. */
function expectBranded(mail: Awaited<ReturnType<Mailbox['waitFor']>>[number], link: string, locale = 'en') {
  const html = mail.parsed.html as string;
  const text = mail.parsed.text!;
  const { t } = translator(locale);
  const imprint = t('layout.footer.link', { kind: 'imprint' });
  const privacy = t('layout.footer.link', { kind: 'privacy' });
  expect(html).toContain(`href="${link}" style="display:inline-block;padding:.5em 1em;background:#7a1f5c;`);
  expect(html).toContain(
    `${FOOTER} · <a href="https://acme.example/imprint">${imprint}</a> · <a href="https://acme.example/privacy">${privacy}</a>`,
  );
  expect(text).toContain(
    `--\n${FOOTER}\n${imprint}: https://acme.example/imprint\n${privacy}: https://acme.example/privacy`,
  );
  expect(text).toContain('Acme Secrets');
}

describe('a branded instance', () => {
  it("sends a push's link in the brand's colour, with its footer and links, and without the secret", async () => {
    const payload = 'branded-payload-5d1e';
    const made = await post('/api/v2/pushes', {
      push: { payload, notify_emails_to: 'ana@example.net', notify_emails_to_locale: 'de' },
    });
    const [mail] = await mailbox.waitFor(1);
    expect(mail!.to).toEqual(['ana@example.net']);
    // Its footer's links in the push's language (notify_emails_to_locale).
    expectBranded(mail!, made.html_url, 'de');
    expect(mail!.parsed.text).not.toContain('Imprint:');
    expect(mail!.raw).not.toContain(payload);
  });

  it("sends a request's link the same way", async () => {
    const made = await post('/api/v2/requests', {
      request: { request: 'the VPN password', notify_emails_to: 'ben@example.net' },
    });
    const mails = await mailbox.waitFor(2);
    const mail = mails.find((m) => m.to.includes('ben@example.net'))!;
    expectBranded(mail, made.html_url);
    expect(mail.raw).not.toContain('the VPN password');
  });
});
