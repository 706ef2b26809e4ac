/**
 * The brand's settings through `loadSettings` (the way the process reads them): good values kept, every bad one
 * refused with a SettingsError naming its variable (bad colours, colours too light for WCAG 2.1 AA, relative or
 * missing paths, a folder, files of the wrong kind or too large, CSS that is not UTF-8, footer text with a line break,
 * links that are not http(s) or carry credentials); a file's content never appears in a message.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contrastRatio, textOn } from '@secret-push/rules';
import { loadSettings, SettingsError } from './settings.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-brand-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const base = { PWPUSH_DATA_DIR: dir, PWPUSH_MASTER_KEY: 'ab'.repeat(32) };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

function file(name: string, content: string | Buffer): string {
  const at = path.join(dir, name);
  writeFileSync(at, content);
  return at;
}

function refusal(env: NodeJS.ProcessEnv): SettingsError {
  try {
    loadSettings({ ...base, ...env });
  } catch (e) {
    expect(e).toBeInstanceOf(SettingsError);
    return e as SettingsError;
  }
  throw new Error('expected a SettingsError');
}

describe('the brand settings', () => {
  it('default to our own look, with the instance name', () => {
    expect(loadSettings(base).brand).toEqual({
      name: 'Secret Push',
      accentColor: null,
      headerColor: null,
      logo: null,
      favicon: null,
      css: null,
      footerText: null,
      imprintUrl: null,
      privacyUrl: null,
    });
    expect(loadSettings({ ...base, PWPUSH_INSTANCE_NAME: 'Acme Secrets' }).brand.name).toBe('Acme Secrets');
  });

  it('keeps good values: colours normalised, files read with their type and ETag, links as URLs', () => {
    const brand = loadSettings({
      ...base,
      PWPUSH_BRAND_ACCENT_COLOR: '#7A1F5C',
      PWPUSH_BRAND_HEADER_COLOR: '#fe0',
      PWPUSH_BRAND_LOGO: file('logo.svg', '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
      PWPUSH_BRAND_FAVICON: file('icon.png', PNG),
      PWPUSH_BRAND_CSS: file('brand.css', 'h1 { color: #222; } /* ü */'),
      PWPUSH_BRAND_FOOTER_TEXT: '  Acme Corp · Springfield  ',
      PWPUSH_BRAND_IMPRINT_URL: 'https://acme.example/imprint',
      PWPUSH_BRAND_PRIVACY_URL: 'https://acme.example/privacy?lang=en',
    }).brand;
    expect(brand).toMatchObject({
      accentColor: '#7a1f5c',
      headerColor: '#ffee00',
      footerText: 'Acme Corp · Springfield',
      imprintUrl: 'https://acme.example/imprint',
      privacyUrl: 'https://acme.example/privacy?lang=en',
      logo: { type: 'image/svg+xml', ext: 'svg' },
      favicon: { type: 'image/png', ext: 'png' },
      css: { type: 'text/css; charset=utf-8', ext: 'css' },
    });
    expect(brand.css!.body.toString()).toBe('h1 { color: #222; } /* ü */');
    expect(brand.css!.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });

  it.each([
    ['PWPUSH_BRAND_ACCENT_COLOR', 'red', /must be a hex colour/],
    ['PWPUSH_BRAND_ACCENT_COLOR', '#12345', /must be a hex colour/],
    ['PWPUSH_BRAND_ACCENT_COLOR', 'url(https://evil.example/x)', /must be a hex colour/],
    ['PWPUSH_BRAND_ACCENT_COLOR', '#0000ff;}body{display:none', /must be a hex colour/],
    ['PWPUSH_BRAND_ACCENT_COLOR', '#ffcc00', /too light: .* reach only 1\.\d\d:1 .* needs 4\.5:1/],
    ['PWPUSH_BRAND_ACCENT_COLOR', '#4a90e2', /too light/],
    ['PWPUSH_BRAND_HEADER_COLOR', 'black', /must be a hex colour/],
    ['PWPUSH_BRAND_FOOTER_TEXT', 'two\nlines', /one line of at most 300 characters/],
    ['PWPUSH_BRAND_FOOTER_TEXT', 'x'.repeat(301), /one line of at most 300 characters/],
    ['PWPUSH_BRAND_IMPRINT_URL', 'javascript:alert(1)', /absolute https:\/\//],
    ['PWPUSH_BRAND_PRIVACY_URL', '/privacy', /absolute https:\/\//],
    ['PWPUSH_BRAND_PRIVACY_URL', 'https://user:pw@acme.example/privacy', /without credentials/],
    ['PWPUSH_BRAND_LOGO', 'logo.png', /must be the absolute path of a .png, .jpg, .jpeg, .gif, .webp, .svg file/],
    ['PWPUSH_BRAND_LOGO', '/no/such/logo.png', /\/no\/such\/logo\.png cannot be read \(ENOENT\)/],
    ['PWPUSH_BRAND_LOGO', '/etc/passwd', /must be the absolute path of a/],
    ['PWPUSH_BRAND_CSS', 'https://cdn.example/brand.css', /must be the absolute path of a .css file/],
  ])('refuses %s=%j, naming the setting', (name, value, message) => {
    const e = refusal({ [name]: value });
    expect(e.variable).toBe(name);
    expect(e.message.startsWith(name)).toBe(true);
    expect(e.message).toMatch(message);
  });

  it('refuses files that are not what their name says, too large, a folder, or not UTF-8, without echoing them', () => {
    const fake = file('fake.png', 'GIF89a secret-looking content');
    const big = file('big.css', 'a{}'.repeat(100_000));
    const latin1 = file('latin1.css', Buffer.from([0x68, 0x31, 0xe9, 0x7b, 0x7d]));
    const folder = path.join(dir, 'folder.css');
    mkdirSync(folder);
    const noSvg = file('nothing.svg', '<html><script>alert(1)</script></html>');
    const cases: [string, string, RegExp][] = [
      ['PWPUSH_BRAND_LOGO', fake, /is not a png file/],
      ['PWPUSH_BRAND_CSS', big, /is larger than 256 KiB/],
      ['PWPUSH_BRAND_CSS', latin1, /is not a css file/],
      ['PWPUSH_BRAND_CSS', folder, /is not a file/],
      ['PWPUSH_BRAND_FAVICON', noSvg, /is not a svg file/],
      ['PWPUSH_BRAND_FAVICON', file('icon.gif', 'GIF89a'), /must be the absolute path of a .ico, .png, .svg file/],
    ];
    for (const [name, at, message] of cases) {
      const e = refusal({ [name]: at });
      expect([e.variable, e.message]).toEqual([name, expect.stringMatching(message)]);
      expect(e.message).not.toMatch(/secret-looking|alert|a\{\}/);
    }
  });

  it('measures contrast as WCAG 2.1 does, and picks black or white text for the header', () => {
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 5);
    expect(contrastRatio('#0b5cad', '#ffffff')).toBeGreaterThan(4.5);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(textOn('#24292f')).toBe('#ffffff');
    expect(textOn('#f0e6d2')).toBe('#000000');
    for (const bg of ['#777777', '#808080', '#ff0000', '#0000ff', '#00ff00', '#7f7f7f'])
      expect(contrastRatio(bg, textOn(bg))).toBeGreaterThanOrEqual(4.5);
  });
});
