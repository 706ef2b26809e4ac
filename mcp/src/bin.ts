/** The `secret-push-mcp` process. */
import os from 'node:os';
import { main } from './main.js';

const outcome = await main(process.argv.slice(2), {
  env: { ...process.env },
  home: os.homedir(),
  platform: process.platform,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
if (outcome !== 'serving') process.exitCode = outcome;
