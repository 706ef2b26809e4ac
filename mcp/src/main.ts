/**
 * `secret-push-mcp`: the MCP server on stdio, configured as the CLI is (SECRET_PUSH_URL, SECRET_PUSH_TOKEN, or a
 * profile of the CLI's config file: SECRET_PUSH_PROFILE, SECRET_PUSH_CONFIG), plus SECRET_PUSH_MCP_ALLOW_RETRIEVE=true
 * (or --allow-retrieve) to enable `retrieve_push`. stdout carries the protocol only; stderr gets one line at start
 * and one per tool call, never an argument or a result.
 */
import { configDir, loadConfig, type Place, requestKeyStore, resolveConnection } from '@secret-push/cli';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSecretPushMcpServer } from './server.js';
import { VERSION } from './version.js';

export interface McpProcess {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  platform: NodeJS.Platform;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: { write(text: string): unknown };
}

const HELP = `secret-push-mcp ${VERSION}: an MCP server (stdio) for Secret Push.

Configuration (environment):
  SECRET_PUSH_URL                   the instance (or a profile of the secret-push CLI's config file)
  SECRET_PUSH_TOKEN                 its API token (an API key with the scopes the tools need)
  SECRET_PUSH_PROFILE               a profile of the config file (SECRET_PUSH_CONFIG: its path)
  SECRET_PUSH_MCP_ALLOW_RETRIEVE    true: enable retrieve_push (off by default; or --allow-retrieve)
`;

/** Starts the server on the process's stdio; resolves once connected, or with an exit code when it cannot start. */
export async function main(argv: string[], proc: McpProcess): Promise<number | 'serving'> {
  const say = (line: string) => proc.stderr.write(`secret-push-mcp: ${line}\n`);
  if (argv.includes('--version')) return (void proc.stderr.write(`${VERSION}\n`), 0);
  if (argv.includes('--help')) return (void proc.stderr.write(HELP), 0);
  const unknown = argv.find((a) => a !== '--allow-retrieve');
  if (unknown !== undefined) return (void say(`unknown argument ${JSON.stringify(unknown.replace(/=.*/, '=…'))}`), 2);
  const place: Place = { env: proc.env, home: proc.home, platform: proc.platform };
  let connection;
  try {
    connection = resolveConnection(await loadConfig(place), proc.env, {});
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    return 3;
  }
  for (const warning of connection.warnings) say(`warning: ${warning}`);
  const allowRetrieve = argv.includes('--allow-retrieve') || proc.env.SECRET_PUSH_MCP_ALLOW_RETRIEVE === 'true';
  const server = createSecretPushMcpServer({
    baseUrl: connection.baseUrl,
    token: connection.token,
    allowRetrieve,
    keyStore: requestKeyStore(configDir(place), proc.platform),
    log: say,
  });
  await server.connect(new StdioServerTransport(proc.stdin as never, proc.stdout as never));
  say(
    `${VERSION} serving ${connection.baseUrl} on stdio (token: ${connection.token ? 'yes' : 'none'}; retrieve_push: ${allowRetrieve ? 'enabled' : 'off'})`,
  );
  return 'serving';
}
