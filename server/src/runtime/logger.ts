/**
 * The server process's logger: pino's JSON lines on stdout, buffered. pino's default writes each line with its own
 * system call, on the event loop, for every request (about 5 % of a request's CPU time in the bench, with the write to
 * the pipe done inline). Here lines are gathered and written a few kilobytes at a time: when 3 KiB are waiting, and
 * every 200 ms otherwise, so a quiet server's lines still appear at once to a reader. Each write holds whole lines and
 * at most PIPE_BUF (4 KiB) bytes, so the lines of a cluster's processes, which share stdout, never interleave inside a
 * line. What is still buffered when the process exits is written synchronously then (pino registers that).
 */
import { pino, type Logger } from 'pino';
import type { Settings } from '../config/settings.js';

/** Writes up to this many bytes to a pipe happen at once (Linux's PIPE_BUF). */
const PIPE_BUF = 4096;

export function createLogger(settings: Pick<Settings, 'logLevel'>): Logger {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: 3072,
    maxWrite: PIPE_BUF,
    periodicFlush: 200,
  });
  // A stdout that fails (its reader gone: EPIPE, which pino already swallows; a full disk under a redirect, a closed
  // descriptor) loses the log lines, never the process: an 'error' nobody listens to would end it.
  destination.on('error', () => {
    destination.write = () => true;
  });
  return pino({ level: settings.logLevel, base: { service: 'secret-push' } }, destination);
}
