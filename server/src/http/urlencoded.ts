/**
 * `application/x-www-form-urlencoded` bodies, parsed as the WHATWG URL Standard says (§5.1: split on `&`, skip empty
 * sequences, split each at its first `=`, `+` as a space, percent-decoding, UTF-8 decoding without BOM handling) but
 * in linear time and as the bytes stream in. Node's `URLSearchParams` is quadratic on pairs without `=` (200,000 of
 * them block the event loop for seconds); this parser touches each byte once.
 *
 * It refuses while it reads, from what it has read so far: more than `maxFields` fields, a name longer than
 * `maxNameBytes`, or a value longer (in code points, as the contract's `maxLength` counts) than its field allows.
 * What `fields()` returns equals `[...new URLSearchParams(text)]` for every body within those bounds (a property test
 * holds the two together: server/test/properties/parsers.test.ts).
 */

export interface FormFieldBounds {
  /** Most fields (non-empty `&`-separated sequences). */
  maxFields: number;
  /** Most bytes of one field name, as sent. */
  maxNameBytes: number;
  /** Most code points of the value of the field called `name` (decoded). */
  maxValue(name: string): number;
}

/** What a form went over: the parser stops at the first one. */
export type FormViolation =
  { kind: 'fields'; limit: number } | { kind: 'name'; limit: number } | { kind: 'value'; name: string; limit: number };

export class FormViolationError extends Error {
  constructor(readonly violation: FormViolation) {
    super(`form over its bounds: ${violation.kind}`);
    this.name = 'FormViolationError';
  }
}

const PLUS = 0x2b;
const PERCENT = 0x25;
const AMP = 0x26;
const EQUALS = 0x3d;

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/** A growable byte buffer (one field's name or value). */
class Bytes {
  private buf = Buffer.allocUnsafe(64);
  length = 0;
  push(byte: number): void {
    if (this.length === this.buf.length) {
      const next = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    this.buf[this.length++] = byte;
  }
  text(): string {
    return this.buf.toString('utf8', 0, this.length);
  }
  reset(): void {
    if (this.buf.length > 4096) this.buf = Buffer.allocUnsafe(64);
    this.length = 0;
  }
}

/**
 * The streaming parser: `write` each chunk (it throws FormViolationError at the first bound passed), then `end()`
 * for the fields in order.
 */
export class UrlencodedParser {
  private readonly out: [string, string][] = [];
  private readonly name = new Bytes();
  private readonly value = new Bytes();
  /** Bytes of the current sequence seen (0: between sequences). */
  private seqBytes = 0;
  private inValue = false;
  /** A `%` and up to one hex digit waiting for the next byte. */
  private pending: number[] = [];
  /** The current value's decoded code points (UTF-8 lead bytes: a lower bound where the bytes are not UTF-8). */
  private valuePoints = 0;
  private valueLimit = Infinity;
  private nameText = '';
  private count = 0;

  constructor(private readonly bounds: FormFieldBounds) {}

  write(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === AMP) {
        this.finishSequence();
        continue;
      }
      if (this.seqBytes === 0) {
        this.count += 1;
        if (this.count > this.bounds.maxFields)
          throw new FormViolationError({ kind: 'fields', limit: this.bounds.maxFields });
      }
      this.seqBytes += 1;
      if (byte === EQUALS && !this.inValue) {
        this.flushPending();
        this.inValue = true;
        this.nameText = this.name.text();
        this.valueLimit = this.bounds.maxValue(this.nameText);
        continue;
      }
      if (!this.inValue && this.seqBytes > this.bounds.maxNameBytes) {
        throw new FormViolationError({ kind: 'name', limit: this.bounds.maxNameBytes });
      }
      this.decode(byte);
    }
  }

  /** The fields, in order, once the body has ended. */
  end(): [string, string][] {
    this.finishSequence();
    return this.out;
  }

  private decode(byte: number): void {
    const pending = this.pending;
    if (pending.length > 0) {
      if (hexValue(byte) >= 0) {
        if (pending.length === 2) {
          this.emit(hexValue(pending[1]!) * 16 + hexValue(byte));
          pending.length = 0;
          return;
        }
        pending.push(byte);
        return;
      }
      this.flushPending();
    }
    if (byte === PERCENT) {
      pending.push(byte);
      return;
    }
    this.emit(byte === PLUS ? 0x20 : byte);
  }

  /** A `%` not followed by two hex digits stays as written. */
  private flushPending(): void {
    const pending = this.pending;
    for (const byte of pending) this.emit(byte === PLUS ? 0x20 : byte);
    pending.length = 0;
  }

  private emit(byte: number): void {
    if (!this.inValue) {
      this.name.push(byte);
      return;
    }
    if ((byte & 0xc0) !== 0x80) {
      this.valuePoints += 1;
      if (this.valuePoints > this.valueLimit) {
        throw new FormViolationError({ kind: 'value', name: this.nameText, limit: this.valueLimit });
      }
    }
    this.value.push(byte);
  }

  private finishSequence(): void {
    if (this.seqBytes === 0) return;
    this.flushPending();
    const name = this.inValue ? this.nameText : this.name.text();
    this.out.push([name, this.inValue ? this.value.text() : '']);
    this.name.reset();
    this.value.reset();
    this.seqBytes = 0;
    this.inValue = false;
    this.valuePoints = 0;
    this.valueLimit = Infinity;
    this.nameText = '';
  }
}
