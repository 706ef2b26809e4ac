/**
 * The rules for account passwords (web sign-up, `npm run users -- set-password`, users made with a password): at
 * least PASSWORD_MIN and at most PASSWORD_MAX characters, and not easy to guess: zxcvbn (`@zxcvbn-ts/core`, with the
 * common-password, English-word and keyboard dictionaries) must score it at least PASSWORD_MIN_SCORE (3 of 0..4:
 * "safely unguessable: moderate protection from an offline slow-hash scenario", about 10^8 guesses and more). A
 * refused password is told why with zxcvbn's own warning ("This is a commonly used password.") and first suggestion,
 * in English in the field's message (the API's text), and as zxcvbn's keys (`warnings.common`) in the error's
 * `details.advice`, which the pages say in the visitor's language (web/field-text.ts).
 *
 * zxcvbn runs in one worker thread per process (./password-strength-worker.ts), started on the first check, not at
 * start-up: its dictionaries cost about 60 MB of memory, which a server that never sees a sign-up does not pay, and a
 * check is up to about a second of CPU for a crafted password, which must not stop the event loop that serves
 * everyone else. The thread keeps the process alive only while a check is pending, is stopped after a minute without checks (its memory
 * given back), and is started again by the next check or if it dies.
 */
import { Worker } from 'node:worker_threads';
import { ApiError } from '@secret-push/rules';
import { COMPILED } from '../runtime/compiled.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;
/** zxcvbn's score a password needs (0 too guessable … 4 very unguessable). */
const PASSWORD_MIN_SCORE = 3;

interface PasswordStrength {
  score: number;
  warning: string | null;
  suggestions: string[];
  /** The warning's and the suggestions' keys (`warnings.common`, `suggestions.anotherWord`), in that order. */
  keys: string[];
}

/** A refused password: the field's English message, and zxcvbn's warning and first suggestion as keys. */
export interface PasswordProblem {
  message: string;
  advice: string[];
}

type Pending = { resolve(strength: PasswordStrength): void; reject(error: Error): void };

interface StrengthThread {
  worker: Worker;
  pending: Map<number, Pending>;
  idle?: NodeJS.Timeout;
}

let thread: StrengthThread | undefined;
let nextId = 0;
/** An idle thread is stopped after this long, giving its memory back; the next check starts it again (about 0.5 s). */
const IDLE_STOP_MS = 60_000;

function strengthThread(): StrengthThread {
  if (thread) return thread;
  // From the sources the thread runs the TypeScript file itself; in the bundle, the entry point built beside it.
  const file = COMPILED
    ? new URL('./password-strength-worker.js', import.meta.url)
    : new URL('./password-strength-worker.ts', import.meta.url);
  const worker = new Worker(file);
  const pending = new Map<number, Pending>();
  const current: StrengthThread = { worker, pending };
  thread = current;
  worker.on('message', (message: { id?: number; error?: string } & PasswordStrength) => {
    if (message.id === undefined) return;
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (pending.size === 0) {
      worker.unref();
      current.idle = setTimeout(() => {
        if (thread === current) thread = undefined;
        void worker.terminate();
      }, IDLE_STOP_MS);
      current.idle.unref();
    }
    if (message.error) waiting?.reject(new Error(`the password-strength check failed (${message.error})`));
    else {
      const { score, warning, suggestions, keys } = message;
      waiting?.resolve({ score, warning, suggestions, keys });
    }
  });
  const fail = (error: Error) => {
    clearTimeout(current.idle);
    if (thread === current) thread = undefined;
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  worker.on('error', (error) => fail(new Error(`the password-strength check failed (${error.name})`)));
  worker.on('exit', () => fail(new Error('the password-strength check stopped')));
  // Held only while a check is pending (after the listeners: attaching a 'message' listener refs the port again).
  worker.unref();
  return current;
}

/** zxcvbn's verdict on `password` (only its first 100 characters are scored); `userInputs` count as guessable words. */
function passwordStrength(password: string, userInputs: string[] = []): Promise<PasswordStrength> {
  const current = strengthThread();
  const { worker, pending } = current;
  clearTimeout(current.idle);
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    if (pending.size === 0) worker.ref();
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, password, userInputs });
  });
}

/** Words of the account that make a password easy to guess: the email, its parts, the service's name. */
function accountWords(email: string): string[] {
  const words = new Set(['secret push', 'secretpush', 'secret-push', 'pwpush', 'password pusher']);
  const e = email.trim().toLowerCase();
  if (e) {
    words.add(e);
    for (const part of e.split(/[@.+_-]+/)) if (part.length >= 3) words.add(part);
  }
  return [...words];
}

/**
 * What is wrong with a password by the account rules ("must be at least 12 characters", "is too easy to guess: This is
 * a commonly used password. Add more words that are less common.", with the keys of that warning and suggestion), or
 * null. Never contains the password.
 */
export async function passwordProblem(password: unknown, email = ''): Promise<PasswordProblem | null> {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN)
    return { message: `must be at least ${PASSWORD_MIN} characters`, advice: [] };
  if (password.length > PASSWORD_MAX) return { message: `must be at most ${PASSWORD_MAX} characters`, advice: [] };
  const strength = await passwordStrength(password, accountWords(email));
  if (strength.score >= PASSWORD_MIN_SCORE) return null;
  const reason = [strength.warning, strength.suggestions[0]].filter(Boolean).join(' ');
  const message = `is too easy to guess${reason ? `: ${reason}` : ': add more words or characters that are less common.'}`;
  const warning = strength.warning ? strength.keys.slice(0, 1) : [];
  const suggestion = strength.keys.find((k) => k.startsWith('suggestions.'));
  return { message, advice: [...warning, ...(suggestion ? [suggestion] : [])] };
}

/** The 422 of a refused password alone: the sentence, the field's message, zxcvbn's keys. */
export function passwordRefused(problem: PasswordProblem): ApiError {
  return new ApiError('validation_failed', passwordSentence(problem.message), {
    fields: { password: [problem.message] },
    advice: problem.advice,
  });
}

/** The sentence for a whole-form message: "The password is too easy to guess: …" (one final full stop). */
const passwordSentence = (problem: string) => `The password ${problem}${/[.!?]$/.test(problem) ? '' : '.'}`;
