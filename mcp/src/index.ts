/**
 * @secret-push/mcp: a Model Context Protocol server for Secret Push. The `secret-push-mcp` bin serves it on stdio;
 * `createSecretPushMcpServer` gives the same server to a host that brings its own transport.
 */
export { createSecretPushMcpServer, type SecretPushMcpOptions } from './server.js';
export { main, type McpProcess } from './main.js';
export { VERSION } from './version.js';
