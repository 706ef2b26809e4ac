// `npm run key`: prints a new master key (32 random bytes as 64 hex characters) for PWPUSH_MASTER_KEY, on one line
// and nowhere else. Keep it where the server's environment is kept; losing it loses every stored secret.
import { randomBytes } from 'node:crypto';

process.stdout.write(`${randomBytes(32).toString('hex')}\n`);
