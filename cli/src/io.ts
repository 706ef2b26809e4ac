/**
 * What a run of the CLI reads and writes: its environment (read here once, like the server's settings), its standard
 * streams, its working directory and its terminal. `main(argv)` takes the process's; a host embedding the CLI (or a
 * test) may give its own.
 */
import { openSync } from 'node:fs';
import os from 'node:os';
import tty from 'node:tty';

export interface Output {
  write(chunk: string | Uint8Array): boolean;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean | undefined };
  stdout: Output;
  stderr: Output;
  cwd: string;
  /** The user's home folder (the config file's default place). */
  home: string;
  platform: NodeJS.Platform;
  /** The terminal to ask for a passphrase or a token on, even when stdin is a pipe; null when there is none. */
  openTerminal(): Terminal | null;
}

/** A terminal opened for one question. */
export interface Terminal {
  input: tty.ReadStream;
  output: NodeJS.WritableStream;
  close(): void;
}

/** The controlling terminal (`/dev/tty`), as ssh and gpg ask on it; else stdin when it is a terminal. */
function processTerminal(): Terminal | null {
  if (process.platform !== 'win32') {
    try {
      const fd = openSync('/dev/tty', 'r+');
      const input = new tty.ReadStream(fd);
      const output = new tty.WriteStream(fd);
      return {
        input,
        output,
        close() {
          input.destroy();
          output.destroy();
        },
      };
    } catch {
      // no controlling terminal (a service, a CI job): fall through
    }
  }
  if (process.stdin.isTTY) {
    return { input: process.stdin as tty.ReadStream, output: process.stderr, close: () => process.stdin.pause() };
  }
  return null;
}

export function processIo(): CliIo {
  return {
    env: { ...process.env },
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    home: os.homedir(),
    platform: process.platform,
    openTerminal: processTerminal,
  };
}
