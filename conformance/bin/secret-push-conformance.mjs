#!/usr/bin/env node
// The suite is TypeScript run through tsx, so no build step stands between a change and a run.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exit(await main(process.argv.slice(2)));
