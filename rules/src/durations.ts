/**
 * Lifetimes: Password Pusher Pro's `expire_after_duration` enum (the contract's `ExpireAfterDuration`) next to whole
 * days, how a create input's two lifetime fields become one lifetime in seconds, which durations an instance accepts,
 * and how a stored lifetime reads back on the wire (exact seconds, days rounded up, the enum value when one matches).
 */
import type { FieldErrors } from './errors.js';
import { DAY_MS } from './limits.js';
import type { PushRuleSettings } from './settings.js';

export const DAY_SECONDS = DAY_MS / 1000;

/** Seconds of each `expire_after_duration` value (index = value), as the contract's table gives them. */
export const DURATION_SECONDS: readonly number[] = [
  900,
  1800,
  2700,
  3600,
  21_600,
  43_200,
  ...[1, 2, 3, 4, 5, 6, 7, 14, 21, 30, 60, 90].map((d) => d * DAY_SECONDS),
];

/** How each value reads in messages and on the create page. */
export const DURATION_LABELS: readonly string[] = [
  '15 minutes',
  '30 minutes',
  '45 minutes',
  '1 hour',
  '6 hours',
  '12 hours',
  '1 day',
  '2 days',
  '3 days',
  '4 days',
  '5 days',
  '6 days',
  '1 week',
  '2 weeks',
  '3 weeks',
  '30 days',
  '60 days',
  '90 days',
];

/** The first value of a day or more (6 = 1 day): below it every value is shorter than any `expire_after_days`. */
export const FIRST_DAY_DURATION = 6;

/** Widest bounds of `PWPUSH_EXPIRE_AFTER_DURATION_MIN`: 0 (15 minutes) to 6 (nothing under a day). */
export const DURATION_MIN_BOUNDS = { min: 0, max: FIRST_DAY_DURATION, default: 0 } as const;

export function daysLabel(days: number): string {
  return `${days} day${days === 1 ? '' : 's'}`;
}

/** A lifetime in seconds as people say it: `15 minutes`, `1 hour`, `3 days`, `36 hours`. */
export function lifetimeLabel(seconds: number): string {
  const value = durationOfSeconds(seconds);
  if (value !== null) return DURATION_LABELS[value]!;
  if (seconds % DAY_SECONDS === 0) return daysLabel(seconds / DAY_SECONDS);
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  return `${Math.round(seconds / 60)} minutes`;
}

/** The enum value of a lifetime, or null when none has exactly that many seconds (8 days, 10 days, …). */
export function durationOfSeconds(seconds: number): number | null {
  const value = DURATION_SECONDS.indexOf(seconds);
  return value === -1 ? null : value;
}

/** Whole days a lifetime spans, rounded up (1 for 15 minutes): what `expire_after_days` says of it. */
export function daysOfSeconds(seconds: number): number {
  return Math.ceil(seconds / DAY_SECONDS);
}

type DurationSettings = Pick<PushRuleSettings, 'expireAfterDays' | 'expireAfterDurationMin'>;

/**
 * Every value the instance accepts, ascending: the sub-day values from `PWPUSH_EXPIRE_AFTER_DURATION_MIN` on, then
 * the values of a day or more whose days lie within the instance's days bounds (one lifetime gets the same answer
 * through either field).
 */
export function acceptedDurations(settings: DurationSettings): number[] {
  const { min, max } = settings.expireAfterDays;
  return DURATION_SECONDS.flatMap((seconds, value) => {
    if (value < FIRST_DAY_DURATION) return value >= settings.expireAfterDurationMin ? [value] : [];
    const days = seconds / DAY_SECONDS;
    return days >= min && days <= max ? [value] : [];
  });
}

function refusal(value: number, accepted: number[]): string {
  const first = accepted[0];
  const last = accepted[accepted.length - 1];
  if (first === undefined || last === undefined) return 'is not accepted on this instance (use expire_after_days)';
  if (value < first) return `must be at least ${first} (${DURATION_LABELS[first]}) on this instance`;
  if (value > last) return `must be at most ${last} (${DURATION_LABELS[last]}) on this instance`;
  return `must be one of ${accepted.join(', ')} on this instance`;
}

/**
 * The lifetime in seconds of an input that gives `expire_after_duration` (and maybe `expire_after_days`), with the
 * messages that refuse it. Both fields given must mean the same lifetime (only durations 6..17 have a days twin),
 * else both are refused, each naming the other; this is decided before the instance's bounds.
 */
export function durationLifetime(
  duration: number,
  days: number | undefined,
  settings: DurationSettings,
): { seconds: number; errors: FieldErrors } {
  const seconds = DURATION_SECONDS[duration]!;
  if (days !== undefined && days * DAY_SECONDS !== seconds) {
    return {
      seconds,
      errors: {
        expire_after_days: [`conflicts with expire_after_duration ${duration} (${DURATION_LABELS[duration]})`],
        expire_after_duration: [`conflicts with expire_after_days ${days} (${daysLabel(days)})`],
      },
    };
  }
  const accepted = acceptedDurations(settings);
  return {
    seconds,
    errors: accepted.includes(duration) ? {} : { expire_after_duration: [refusal(duration, accepted)] },
  };
}
