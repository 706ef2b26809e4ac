/** Multipart bodies built by hand, part by part, the way the clients' libraries build them (Python's requests, Go's mime/multipart). */

export interface Part {
  name: string;
  value?: string;
  filename?: string;
  type?: string;
  bytes?: Buffer;
}

/** The body and its Content-Type; `label` goes into the boundary, as each library names its own. */
export function multipart(parts: Part[], label = 'client'): { body: Uint8Array<ArrayBuffer>; type: string } {
  const boundary = `----${label}${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined)
      head += `; filename="${p.filename}"\r\nContent-Type: ${p.type ?? 'application/octet-stream'}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`), p.bytes ?? Buffer.from(p.value ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: new Uint8Array(Buffer.concat(chunks)), type: `multipart/form-data; boundary=${boundary}` };
}
