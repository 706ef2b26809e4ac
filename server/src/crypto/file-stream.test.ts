import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { createKeyring, DecryptionError } from './envelope.js';
import { openStream, sealedSize, sealStream, SEGMENT_BYTES } from './file-stream.js';

const A = { id: 'a', key: Buffer.alloc(32, 1) };
const B = { id: 'b', key: Buffer.alloc(32, 2) };

/** Runs `bytes` (in chunks of `chunk` bytes) through a transform and gathers what comes out. */
async function through(transform: NodeJS.ReadWriteStream, bytes: Buffer, chunk = 10_000): Promise<Buffer> {
  const out: Buffer[] = [];
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  await pipeline(Readable.from(parts), transform, async (source: AsyncIterable<Buffer | string>) => {
    for await (const piece of source) out.push(Buffer.from(piece));
  });
  return Buffer.concat(out);
}

describe('the streamed file envelope', () => {
  it.each([0, 1, SEGMENT_BYTES - 1, SEGMENT_BYTES, SEGMENT_BYTES + 1, 3 * SEGMENT_BYTES, 200_003])(
    'round-trips %i bytes in any chunking, and its size is sealedSize',
    async (size) => {
      const ring = createKeyring([A]);
      const plain = randomBytes(size);
      for (const chunk of [1_000, 65_536, 1 << 20]) {
        const sealed = await through(sealStream(ring, 'push_files.content:f1'), plain, chunk);
        expect(sealed.length).toBe(sealedSize(size, 'a'));
        if (size > 64) expect(sealed.includes(plain.subarray(0, 64))).toBe(false);
        expect((await through(openStream(ring, 'push_files.content:f1'), sealed, chunk + 7)).equals(plain)).toBe(true);
      }
    },
  );

  it('opens under a previous key, and names a key the ring does not hold', async () => {
    const sealed = await through(sealStream(createKeyring([A]), 'ctx'), Buffer.from('rotated'));
    expect((await through(openStream(createKeyring([B, A]), 'ctx'), sealed)).toString()).toBe('rotated');
    await expect(through(openStream(createKeyring([B]), 'ctx'), sealed)).rejects.toThrow(/no key with id "a"/);
  });

  it('refuses another row, a changed byte, a cut at a segment end, a dropped or swapped segment', async () => {
    const ring = createKeyring([A]);
    const plain = randomBytes(3 * SEGMENT_BYTES + 10);
    const sealed = await through(sealStream(ring, 'row:1'), plain);
    const header = sealedSize(0, 'a') - 16;
    const seg = SEGMENT_BYTES + 16;
    const open = (bytes: Buffer, aad = 'row:1') => through(openStream(ring, aad), bytes);
    await expect(open(sealed, 'row:2')).rejects.toBeInstanceOf(DecryptionError);
    const flipped = Buffer.from(sealed);
    flipped[header + 5]! ^= 1;
    await expect(open(flipped)).rejects.toBeInstanceOf(DecryptionError);
    // Cut after two whole segments: the second was sealed as not the last.
    await expect(open(sealed.subarray(0, header + 2 * seg))).rejects.toBeInstanceOf(DecryptionError);
    const dropped = Buffer.concat([sealed.subarray(0, header + seg), sealed.subarray(header + 2 * seg)]);
    await expect(open(dropped)).rejects.toBeInstanceOf(DecryptionError);
    const swapped = Buffer.concat([
      sealed.subarray(0, header),
      sealed.subarray(header + seg, header + 2 * seg),
      sealed.subarray(header, header + seg),
      sealed.subarray(header + 2 * seg),
    ]);
    await expect(open(swapped)).rejects.toBeInstanceOf(DecryptionError);
    await expect(open(sealed.subarray(0, 10))).rejects.toBeInstanceOf(DecryptionError);
    await expect(open(Buffer.concat([sealed, sealed.subarray(header, header + seg)]))).rejects.toBeInstanceOf(
      DecryptionError,
    );
  });

  it('gives out no plaintext of a segment before its tag is checked', async () => {
    const ring = createKeyring([A]);
    const plain = randomBytes(2 * SEGMENT_BYTES);
    const sealed = await through(sealStream(ring, 'row:1'), plain);
    const bad = Buffer.from(sealed);
    bad[bad.length - 20]! ^= 1; // in the last segment
    const out: Buffer[] = [];
    const opener = openStream(ring, 'row:1');
    opener.on('data', (piece: Buffer) => out.push(piece));
    await expect(pipeline(Readable.from([bad]), opener)).rejects.toBeInstanceOf(DecryptionError);
    // The first segment was whole and authentic; nothing of the tampered one came out.
    expect(Buffer.concat(out).equals(plain.subarray(0, SEGMENT_BYTES))).toBe(true);
  });
});
