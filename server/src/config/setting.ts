/**
 * One declaration per setting: its variable, its default, what it accepts and its meaning, written once; the
 * declaration is also the setting's only reader (`read(env)`), and the settings table (docs/settings.md) is made from
 * the declarations (`doc`). The areas' tables (./settings/*.ts) declare their settings with these builders; the
 * loader (./settings.ts) reads each area through them. A bad value throws SettingsError naming the variable and what
 * it accepts; the value itself is never echoed for secret variables.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Bounds } from '@secret-push/rules';

export type Env = NodeJS.ProcessEnv;

export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** A row of the settings table: what the variable is called, its default, what it accepts and what it means. */
export interface SettingDoc {
  name: string;
  default: string;
  accepts: string;
  meaning: string;
}

/**
 * A setting: its row of the table and its reader. `secret`: what the secret is, for docs/deploy.md's table (a secret
 * setting is also read from `NAME_FILE`, which has a row of its own).
 */
export interface Setting<T> {
  readonly name: string;
  readonly doc: SettingDoc;
  readonly secret?: string;
  read(env: Env): T;
}

/** What every declaration gives: its meaning, and how its default reads in the table when not the value itself. */
interface Described {
  meaning: string;
  /** The default as the table shows it, when it is not simply the value (derived, unset, …). */
  shown?: string;
}

const code = (value: string | number | boolean) => `\`${value}\``;
const number = (n: number) => n.toLocaleString('en-US');

function setting<T>(name: string, doc: Omit<SettingDoc, 'name'>, read: (env: Env) => T, secret?: string): Setting<T> {
  return { name, doc: { name, ...doc }, ...(secret === undefined ? {} : { secret }), read };
}

/** The value of `name`, trimmed; undefined when unset or blank. The one place a variable's value is read. */
export function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new SettingsError(name, `${name} must be one of true, false, 1, 0, yes, no (got "${value}")`);
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) {
    throw new SettingsError(name, `${name} must be an integer from ${min} to ${max} (got "${value}")`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new SettingsError(name, `${name} must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

export const MIB = 1024 * 1024;
const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kib: 1024,
  mib: MIB,
  gib: 1024 * MIB,
  tib: 1024 * 1024 * MIB,
};
const MAX_BYTE_SIZE = 1024 * 1024 * MIB;

/** A size in bytes: a whole number, optionally with a binary unit (`512KiB`, `100MiB`, `1GiB`); at most 1 TiB. */
function readByteSize(env: Env, name: string, fallback: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = /^(\d{1,16})\s*([a-z]*)$/i.exec(value);
  const unit = match ? BYTE_UNITS[match[2]!.toLowerCase()] : undefined;
  const n = match && unit ? Number(match[1]) * unit : NaN;
  if (!Number.isSafeInteger(n) || n > MAX_BYTE_SIZE) {
    throw new SettingsError(
      name,
      `${name} must be a number of bytes, optionally with a unit (KiB, MiB, GiB, TiB), at most 1TiB; 0 turns it off (got "${value}")`,
    );
  }
  return n;
}

/** A byte size as the table shows it: in the largest unit that divides it (`100MiB`, `1GiB`). */
function shownBytes(n: number): string {
  for (const [unit, size] of [
    ['TiB', 1024 * 1024 * MIB],
    ['GiB', 1024 * MIB],
    ['MiB', MIB],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

function readOneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new SettingsError(name, `${name} must be one of ${allowed.join(', ')} (got "${value}")`);
}

/** An absolute http(s) base URL, without credentials, query or fragment, and without a trailing slash. */
export function readHttpUrl(env: Env, name: string): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(name, `${name} must be an absolute http:// or https:// URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SettingsError(name, `${name} must be an absolute http:// or https:// URL (got "${value}")`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new SettingsError(name, `${name} must be a base URL without credentials, query or fragment`);
  }
  // Keep a path prefix (a server mounted under /secrets) but never a trailing slash.
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/**
 * A secret given inline (`NAME`) or in a file (`NAME_FILE`, its first line): at most one of them; undefined when
 * neither is set. Never echoed: an error names the variable and the file, never what it holds.
 */
function readSecret(env: Env, name: string): { value: string; from: string } | undefined {
  const inline = raw(env, name);
  const file = raw(env, `${name}_FILE`);
  if (inline !== undefined && file !== undefined) {
    throw new SettingsError(name, `Set only one of ${name} and ${name}_FILE`);
  }
  if (inline !== undefined) return { value: inline, from: name };
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path.resolve(file), 'utf8');
  } catch (err) {
    throw new SettingsError(
      `${name}_FILE`,
      `${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const value = text.split(/\r?\n/)[0]!.trim();
  if (value === '') throw new SettingsError(`${name}_FILE`, `${name}_FILE: ${file} is empty`);
  return { value, from: `${name}_FILE` };
}

/**
 * A setting whose reader its area writes (a check the builders here do not cover, such as the brand's colours and
 * files): its row of the table, and `read`, the one reader of the variable.
 */
export function declared<T>(name: string, doc: Omit<SettingDoc, 'name'>, read: (env: Env) => T): Setting<T> {
  return setting(name, doc, read);
}

/** `true` or `false` (also 1, 0, yes, no). */
export function flag(name: string, fallback: boolean, d: Described): Setting<boolean> {
  return setting(name, { default: d.shown ?? code(fallback), accepts: '`true`, `false`', meaning: d.meaning }, (env) =>
    readBool(env, name, fallback),
  );
}

/**
 * A whole number from `min` to `max`. `read(env, fallback)`: a default computed at start-up (the table then shows
 * `shown`).
 */
export function integer(
  name: string,
  spec: { default: number; min: number; max: number } & Described,
): Setting<number> & { readOr(env: Env, fallback: number): number } {
  const { min, max } = spec;
  const accepts = `${number(min)}..${number(max)}`;
  return {
    ...setting(name, { default: spec.shown ?? code(spec.default), accepts, meaning: spec.meaning }, (env) =>
      readInt(env, name, spec.default, min, max),
    ),
    readOr: (env, fallback) => readInt(env, name, fallback, min, max),
  };
}

/** A whole number from `min` to `max`, or unset (null). */
export function optionalInteger(
  name: string,
  spec: { min: number; max: number; shown: string; meaning: string },
): Setting<number | null> {
  const accepts = `${number(spec.min)}..${number(spec.max)}`;
  return setting(name, { default: spec.shown, accepts, meaning: spec.meaning }, (env) =>
    raw(env, name) === undefined ? null : readInt(env, name, 0, spec.min, spec.max),
  );
}

/** A number of bytes, optionally with a binary unit; at most 1 TiB; `0` turns the limit off. */
export function byteSize(name: string, fallback: number, d: Described): Setting<number> {
  const accepts = 'bytes, or with a unit (`KiB`, `MiB`, `GiB`, `TiB`): 0..1TiB; `0` turns it off';
  return setting(name, { default: d.shown ?? code(shownBytes(fallback)), accepts, meaning: d.meaning }, (env) =>
    readByteSize(env, name, fallback),
  );
}

/** One of `allowed` (any case). */
export function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T, d: Described): Setting<T> {
  const accepts = allowed.map(code).join(', ');
  return setting(name, { default: d.shown ?? code(fallback), accepts, meaning: d.meaning }, (env) =>
    readOneOf(env, name, allowed, fallback),
  );
}

/** Free text (trimmed): `default` when unset, else undefined; its area's reader checks it. */
export function text(name: string, spec: { default: string; accepts: string; meaning: string }): Setting<string>;
export function text(
  name: string,
  spec: { shown: string; accepts: string; meaning: string },
): Setting<string | undefined>;
export function text(
  name: string,
  spec: { default?: string; shown?: string; accepts: string; meaning: string },
): Setting<string | undefined> {
  const shown = spec.shown ?? code(spec.default!);
  return setting(name, { default: shown, accepts: spec.accepts, meaning: spec.meaning }, (env) =>
    spec.default === undefined ? raw(env, name) : (raw(env, name) ?? spec.default),
  );
}

/** An absolute http:// or https:// base URL (no credentials, query or fragment), or null when unset. */
export function httpUrl(name: string, spec: { shown: string; meaning: string }): Setting<string | null> {
  const accepts = 'an absolute `http://` or `https://` URL';
  return setting(name, { default: spec.shown, accepts, meaning: spec.meaning }, (env) => readHttpUrl(env, name));
}

/**
 * A secret, given inline or in `NAME_FILE` (its first line; setting both is refused): `what` it is, for
 * docs/deploy.md's table. `read` gives the value and the variable it came from (for errors), or undefined.
 */
export function secret(
  name: string,
  spec: { shown: string; accepts: string; meaning: string; what: string },
): Setting<{ value: string; from: string } | undefined> & { required(env: Env, neededBy: string): string } {
  return {
    ...setting(
      name,
      { default: spec.shown, accepts: spec.accepts, meaning: spec.meaning },
      (env) => readSecret(env, name),
      spec.what,
    ),
    /** A secret that must be set (inline or in a file): `neededBy` says what needs it. Never echoed. */
    required(env, neededBy) {
      const value = readSecret(env, name);
      if (value === undefined) throw new SettingsError(name, `${neededBy} needs ${name} or ${name}_FILE`);
      return value.value;
    },
  };
}

/**
 * `<prefix>_DEFAULT`, `_MIN` and `_MAX` of a value the API bounds (`spec`: the contract's own bounds), as three
 * settings of the table; `read` gives the three, the default within the others.
 */
export function bounds(
  prefix: string,
  spec: { min: number; max: number; default: number },
  field: string,
): { settings: Setting<number>[]; read(env: Env): Bounds } {
  const range = `${number(spec.min)}..${number(spec.max)}`;
  const settings = [
    setting(
      `${prefix}_DEFAULT`,
      { default: code(spec.default), accepts: '_MIN.._MAX', meaning: `Default \`${field}\`.` },
      (env) => readInt(env, `${prefix}_DEFAULT`, spec.default, spec.min, spec.max),
    ),
    setting(
      `${prefix}_MIN`,
      { default: code(spec.min), accepts: range, meaning: `Smallest \`${field}\` accepted.` },
      (env) => readInt(env, `${prefix}_MIN`, spec.min, spec.min, spec.max),
    ),
    setting(
      `${prefix}_MAX`,
      { default: code(spec.max), accepts: range, meaning: `Largest \`${field}\` accepted.` },
      (env) => readInt(env, `${prefix}_MAX`, spec.max, spec.min, spec.max),
    ),
  ];
  return {
    settings,
    read(env) {
      const min = readInt(env, `${prefix}_MIN`, spec.min, spec.min, spec.max);
      const max = readInt(env, `${prefix}_MAX`, spec.max, spec.min, spec.max);
      if (min > max) {
        throw new SettingsError(
          `${prefix}_MIN`,
          `${prefix}_MIN (${min}) must not be greater than ${prefix}_MAX (${max})`,
        );
      }
      const fallback = Math.min(Math.max(spec.default, min), max);
      const def = readInt(env, `${prefix}_DEFAULT`, fallback, min, max);
      return { default: def, min, max };
    },
  };
}
