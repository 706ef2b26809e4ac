/**
 * @secret-push/cli: the `secret-push` command (bin) and, for programs that embed it or share its configuration (the
 * MCP server, `@secret-push/mcp`), its entry point, its config file and its key store of sealed requests.
 */
export { main } from './main.js';
export { type CliIo, type Output, type Terminal, processIo } from './io.js';
export { EXIT, type ExitCode } from './exit.js';
export {
  type ConfigEnv,
  configDir,
  type ConfigFile,
  configPath,
  type Connection,
  loadConfig,
  type Place,
  type Profile,
  resolveConnection,
} from './config.js';
export { requestKeyStore, type RequestKeyStore, type RequestKeys, type RequestPublicJwk } from './key-store.js';
export { VERSION } from './version.js';
