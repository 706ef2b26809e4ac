/**
 * The password-strength thread (see ./password-strength.ts): zxcvbn with the common and English dictionaries, loaded
 * once when the thread starts, answering one check per message. A check is synchronous CPU work (up to about a
 * second for a crafted 100-character password), so it runs here and never on a server's event loop.
 *
 * Plain TypeScript that Node runs as is (type annotations only, npm packages only): from the sources in tests and
 * `npm run dev`, and as its own entry point of the compiled server (server/dist/password-strength-worker.js).
 */
import { parentPort } from 'node:worker_threads';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

/** Only the first characters are scored (the time grows fast with length); a longer password is no weaker for it. */
const SCORED_LENGTH = 100;

/** zxcvbn's feedback as its keys (`warnings.common`): the thread hands back both, the keys and the English text. */
const KEYS = {
  warnings: Object.fromEntries(Object.keys(en.translations.warnings).map((k) => [k, `warnings.${k}`])),
  suggestions: Object.fromEntries(Object.keys(en.translations.suggestions).map((k) => [k, `suggestions.${k}`])),
  timeEstimation: en.translations.timeEstimation,
} as typeof en.translations;

/** The English text of a key (`warnings.common` → "This is a commonly used password."). */
function english(key: string): string {
  const [group, name] = key.split('.') as ['warnings' | 'suggestions', string];
  return (en.translations[group] as Record<string, string>)[name] ?? key;
}

const zxcvbn = new ZxcvbnFactory({
  translations: KEYS,
  graphs: common.adjacencyGraphs,
  dictionary: { ...common.dictionary, ...en.dictionary },
  maxLength: SCORED_LENGTH,
});

interface Request {
  id: number;
  password: string;
  userInputs: string[];
}

parentPort!.on('message', ({ id, password, userInputs }: Request) => {
  try {
    const result = zxcvbn.check(password.slice(0, SCORED_LENGTH), userInputs);
    const warningKey = result.feedback.warning || null;
    parentPort!.postMessage({
      id,
      score: result.score,
      warning: warningKey ? english(warningKey) : null,
      suggestions: result.feedback.suggestions.map(english),
      keys: [...(warningKey ? [warningKey] : []), ...result.feedback.suggestions],
    });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.name : 'Error' });
  }
});
parentPort!.postMessage({ ready: true });
