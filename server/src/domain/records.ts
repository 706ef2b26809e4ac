/**
 * Rows of the `pushes` table and how they become the wire's push record. State is always computed at read time:
 * a push past `expires_at` is expired even when no request or sweep has touched it yet.
 */
import type { PushKind } from '../../../sdk/src/generated/types.gen.js';
import type { Push } from './contract.js';

export interface PushRow {
  id: string;
  url_token: string;
  kind: PushKind;
  user_id: string | null;
  payload_ciphertext: string | null;
  name_ciphertext: string | null;
  note_ciphertext: string | null;
  passphrase_hash: string | null;
  passphrase_protected: boolean;
  expire_after_days: number;
  expire_after_views: number;
  views_used: number;
  deletable_by_viewer: boolean;
  retrieval_step: boolean;
  expired: boolean;
  expired_on: string | Date | null;
  deleted: boolean;
  created_at: string | Date;
  updated_at: string | Date;
  expires_at: string | Date;
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Parses what PostgreSQL returns for timestamptz (`2026-01-01 10:00:00.123+00`) into a Date. */
export function toDate(value: string | Date): Date {
  if (value instanceof Date) return value;
  let s = value.trim().replace(' ', 'T');
  if (/[+-]\d\d$/.test(s)) s += ':00';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new Error(`unreadable timestamp from the database: ${value}`);
  return d;
}

export function iso(value: string | Date): string {
  return toDate(value).toISOString();
}

export function isPastTime(row: Pick<PushRow, 'expires_at'>, now: Date): boolean {
  return toDate(row.expires_at).getTime() <= now.getTime();
}

/** The real state: the stored flag, or time run out. */
export function isExpired(row: Pick<PushRow, 'expired' | 'expires_at'>, now: Date): boolean {
  return row.expired || isPastTime(row, now);
}

export function trimBase(base: string): string {
  return base.replace(/\/+$/, '');
}

export function htmlUrl(base: string, row: Pick<PushRow, 'url_token' | 'retrieval_step'>): string {
  return `${trimBase(base)}/p/${row.url_token}${row.retrieval_step ? '/r' : ''}`;
}

export function jsonUrl(base: string, urlToken: string): string {
  return `${trimBase(base)}/api/v2/pushes/${urlToken}`;
}

export function pushRecord(row: PushRow, now: Date, base: string): Push {
  const createdAt = toDate(row.created_at);
  const expiresAt = toDate(row.expires_at);
  const timeUp = expiresAt.getTime() <= now.getTime();
  const expired = row.expired || timeUp;
  const expiredOn = row.expired_on ? toDate(row.expired_on) : timeUp ? expiresAt : null;
  const elapsedDays = Math.floor(Math.max(now.getTime() - createdAt.getTime(), 0) / DAY_MS);
  const daysRemaining = timeUp ? 0 : Math.min(Math.max(row.expire_after_days - elapsedDays, 0), row.expire_after_days);
  return {
    url_token: row.url_token,
    kind: row.kind,
    expired,
    expired_on: expiredOn ? expiredOn.toISOString() : null,
    deleted: row.deleted,
    created_at: createdAt.toISOString(),
    updated_at: iso(row.updated_at),
    expires_at: expiresAt.toISOString(),
    expire_after_days: row.expire_after_days,
    expire_after_views: row.expire_after_views,
    days_remaining: daysRemaining,
    views_remaining: Math.max(row.expire_after_views - row.views_used, 0),
    deletable_by_viewer: row.deletable_by_viewer,
    retrieval_step: row.retrieval_step,
    passphrase_protected: row.passphrase_protected,
    json_url: jsonUrl(base, row.url_token),
    html_url: htmlUrl(base, row),
  };
}
