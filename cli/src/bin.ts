/** The `secret-push` process: its arguments, its streams, its exit code. */
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
