/** The MCP server's own version (its `serverInfo`, `--version`, the User-Agent), from its package.json. */
import manifest from '../package.json' with { type: 'json' };

export const VERSION: string = manifest.version;
