/**
 * The lifetime options shared by `push` and `request create`: `--views N`, `--days N`, or `--expires 15m|1h|2d|1w…`
 * (Password Pusher Pro's `expire_after_duration`, checked against the values the instance reports; a whole number
 * of days goes as `expire_after_days` to an instance that does not report durations).
 */
import type { VersionReport } from '@secret-push/sdk';
import type { Args } from './args.js';
import type { Options } from './command.js';
import { CliError, EXIT, usageError } from './exit.js';

export const EXPIRY_OPTIONS: Options = {
  views: { type: 'string', value: 'N', help: 'expire after N views (1 to 100; the instance default otherwise)' },
  days: { type: 'string', value: 'N', help: 'expire after N days (1 to 90)' },
  expires: {
    type: 'string',
    value: 'TIME',
    help: 'expire after 15m, 30m, 45m, 1h, 6h, 12h, 1d to 6d, 1w, 2w, 3w, 30d, 60d or 90d',
    complete: ['15m', '30m', '45m', '1h', '6h', '12h', '1d', '2d', '3d', '1w', '2w', '30d', '90d'],
  },
  'retrieval-step': {
    type: 'boolean',
    help: 'the recipient clicks through a page first (link scanners spend no view)',
  },
  'no-deletable': { type: 'boolean', help: 'the recipient may not delete it (default: the instance’s)' },
  deletable: { type: 'boolean', help: 'the recipient may delete it' },
};

/** `expire_after_duration`'s values (0..17) in seconds, as the contract lists them. */
const DURATION_SECONDS = [
  900, 1800, 2700, 3600, 21600, 43200, 86400, 172800, 259200, 345600, 432000, 518400, 604800, 1209600, 1814400, 2592000,
  5184000, 7776000,
];
const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86400, w: 604800 };

export interface Expiry {
  expire_after_views?: number;
  expire_after_days?: number;
  expire_after_duration?: number;
  retrieval_step?: boolean;
  deletable_by_viewer?: boolean;
}

export function expiryOf(args: Args, report: () => Promise<VersionReport>): Promise<Expiry> | Expiry {
  args.exclusive('days', 'expires');
  args.exclusive('deletable', 'no-deletable');
  const out: Expiry = {};
  const views = args.int('views', 1, 100);
  if (views !== undefined) out.expire_after_views = views;
  const days = args.int('days', 1, 90);
  if (days !== undefined) out.expire_after_days = days;
  if (args.flag('retrieval-step')) out.retrieval_step = true;
  if (args.flag('deletable')) out.deletable_by_viewer = true;
  if (args.flag('no-deletable')) out.deletable_by_viewer = false;
  const expires = args.string('expires');
  if (expires === undefined) return out;
  const match = /^(\d{1,3})([mhdw])$/.exec(expires);
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2]!]! : NaN;
  const value = DURATION_SECONDS.indexOf(seconds);
  if (value < 0)
    throw usageError(`--expires takes ${String(EXPIRY_OPTIONS.expires!.help).replace('expire after ', '')}`);
  return report().then((version) => {
    const feature = version.features.pushes.expire_after_duration;
    if (feature?.enabled) {
      if (!feature.values.includes(value))
        throw new CliError(`this instance does not accept --expires ${expires}`, EXIT.invalid, 'validation_failed');
      return { ...out, expire_after_duration: value };
    }
    if (seconds % 86400 !== 0)
      throw new CliError('this instance takes lifetimes in whole days only: use --days', EXIT.invalid);
    return { ...out, expire_after_days: seconds / 86400 };
  });
}
