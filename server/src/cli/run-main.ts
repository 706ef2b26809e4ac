/**
 * The entry of an administrator command (`npm run users`, `npm run files`): when its module is the program node runs
 * (the compiled `server/dist/<name>.js` or the source `server/src/cli/<name>.ts`), run it with the process's arguments
 * and streams, and exit with its code; a thrown error is one `error: …` line and exit code 1.
 */
export type CliRun = (args: string[], out: (line: string) => void, err: (line: string) => void) => Promise<number>;

export function runWhenMain(moduleUrl: string, sourceName: string, run: CliRun): void {
  const isMain = moduleUrl === `file://${process.argv[1]}` || process.argv[1]?.endsWith(`/cli/${sourceName}`);
  if (!isMain) return;
  run(
    process.argv.slice(2),
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`),
  ).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
