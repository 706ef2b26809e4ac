/** The CLI's own version (`secret-push --version`, the User-Agent), from its package.json. */
import manifest from '../package.json' with { type: 'json' };

export const VERSION: string = manifest.version;
