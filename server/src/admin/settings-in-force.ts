/**
 * The admin console's "Settings" page: every field of the settings this process runs with, by its dotted path
 * (`mail.from`, `webhooks.retrySchedule`), as text. A secret is shown as set or not set, never its value: the fields
 * of SECRET_SETTING_FIELDS (the master keys by their ids only), any byte buffer, and the password of any URL.
 */
import { SECRET_SETTING_FIELDS, type Settings } from '../config/settings.js';

export interface SettingInForce {
  path: string;
  value: string;
  secret: boolean;
}

const SECRET_PATHS = new Set(Object.values(SECRET_SETTING_FIELDS));
/** Longest value shown (a list of origins may be long). */
const MAX_SHOWN = 500;

/** A URL's password, if any, replaced (an S3 endpoint or an issuer could carry one). */
function withoutPassword(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*):[^/@\s]*@/gi, '$1:****@');
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return 'not set';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map((v) => shown(v)).join(', ');
  if (typeof value === 'string') return withoutPassword(value).slice(0, MAX_SHOWN);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '(value)';
}

function secretShown(path: string, value: unknown): string {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return 'not set';
  // The master keys' ids name which key sealed what (they are stored beside every ciphertext): not secret.
  if (path === 'masterKeys' && Array.isArray(value))
    return `set (key ids: ${value.map((k) => String((k as { id?: unknown }).id)).join(', ')})`;
  return 'set';
}

export function settingsInForce(settings: Settings): SettingInForce[] {
  const out: SettingInForce[] = [];
  const walk = (value: unknown, path: string) => {
    if (SECRET_PATHS.has(path)) {
      out.push({ path, value: secretShown(path, value), secret: true });
    } else if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
      out.push({ path, value: value.length > 0 ? 'set' : 'not set', secret: true });
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
    } else if (typeof value !== 'function') {
      out.push({ path, value: shown(value), secret: false });
    }
  };
  walk(settings, '');
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
