/**
 * `@secret-push/conformance` as a library: run the suite from your own test runner instead of the CLI.
 *
 * ```ts
 * import { runSuite, exitCode, formatTable } from '@secret-push/conformance';
 * const run = await runSuite({ baseUrl: 'http://localhost:5100', token, tokenB, profile: 'full' });
 * if (exitCode(run.results) !== 0) throw new Error(formatTable(run));
 * ```
 */
export { REQUIREMENTS, runSuite, type RunConfig, type RunOutput } from './runner.js';
export { exitCode, formatJson, formatJunit, formatTable, summarize } from './report.js';
export { AREAS, AREA_TITLES, type Area, type Requirement, type Result, type Status } from './requirement.js';
export { TargetRateLimited, type MailboxMessage, type Options } from './context.js';
export { FAULTS } from './grade/faults/index.js';
export { grade, type FaultResult } from './grade/grader.js';
export { main } from './cli.js';
