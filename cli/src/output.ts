/**
 * Writing what a command got: tables for people, files saved without ever overwriting one or leaving the chosen
 * folder (a file's name comes from whoever made the push, and an end-to-end encrypted name is only checked here).
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT } from './exit.js';

/** Columns padded to their widest cell; control characters of the cells shown as `?` (a terminal must not obey them). */
export function table(headers: string[], rows: string[][]): string {
  const clean = rows.map((row) => row.map(printable));
  const widths = headers.map((h, i) => Math.max(h.length, ...clean.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...clean.map(line)].join('\n');
}

/** Text from the server or a sender, safe to print on a terminal: no escape sequences, no carriage returns. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?');
}

const MAX_NAME_BYTES = 200;

/**
 * A file name safe to create in the output folder: its last path segment only, no control or reserved characters,
 * no leading dot (a sender must not plant `.envrc` or `.bashrc`), at most 200 bytes; `file` when nothing is left.
 */
function safeFileName(name: string): string {
  let base = name.split(/[/\\]/).pop() ?? '';
  base = base.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').replace(/^[.\s]+/, (m) => '_'.repeat(m.length));
  base = base.trim();
  while (Buffer.byteLength(base) > MAX_NAME_BYTES) base = [...base].slice(0, -1).join('');
  return base === '' || /^_+$/.test(base) ? 'file' : base;
}

function numbered(name: string, n: number): string {
  const ext = path.extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem}-${n}${ext && ext !== name ? ext : ''}`;
}

/** Creates a new file (mode 0600: it holds a secret) in `dir`, never overwriting: `name-1.ext`, … when taken. */
export async function saveNewFile(dir: string, name: string, bytes: Uint8Array): Promise<string> {
  const safe = safeFileName(name);
  for (let n = 0; n < 100; n++) {
    const file = path.join(dir, n === 0 ? safe : numbered(safe, n));
    let handle;
    try {
      handle = await open(file, 'wx', 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      throw new CliError(`cannot write ${file}: ${code ?? String(error)}`, EXIT.failure);
    }
    try {
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
    return file;
  }
  throw new CliError(`cannot find a free name for ${safe} in ${dir}`, EXIT.failure);
}
