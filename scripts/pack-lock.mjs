// One `npm pack` of the repository's workspaces at a time: each runs its package's prepack (a build into the
// package's folder) and postpack (which removes that build), so two at once in one tree clash (the CI saw the
// packaging tests' two packs of the SDK, run side by side by vitest, fail each other). A lock directory made with
// mkdir (atomic) holds the owner's pid; a lock whose process is gone is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};

/** Runs `fn` holding the repository's pack lock (waiting for it, at most `waitMs`). */
export async function withPackLock(root, fn, waitMs = 30 * 60_000) {
  const lock = path.join(root, 'node_modules', '.cache', 'secret-push-pack.lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let owner = NaN;
      try {
        owner = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        // Made but not yet written: its owner is writing it now.
      }
      if (Number.isInteger(owner) && owner > 0 && !alive(owner)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > until) throw new Error(`another npm pack holds ${lock} (pid ${owner})`);
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
