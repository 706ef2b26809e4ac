/**
 * A streaming structural scan of JSON bytes, run on each chunk of a body as it arrives, before `JSON.parse` and before
 * the schema validator. It follows the JSON grammar (RFC 8259) and enforces, at each position, the bounds the contract
 * gives it (./body-bounds.ts: code points of a string, items of an array, keys of an object) and, everywhere, a depth,
 * a count of values, a key length and a number length. It throws at the first bound passed, so a body over them is
 * refused after reading no more than the bound's worth of bytes, and `JSON.parse` only ever sees bodies whose
 * structure is bounded. Each byte is looked at once (string contents in runs, through `indexOf` and `isAscii`):
 * linear time, constant memory (a stack no deeper than the depth bound).
 *
 * Its verdict on the syntax is one-sided: when it says `invalid`, `JSON.parse` fails on the same text too (a property
 * test holds it: server/test/properties/parsers.test.ts); control characters inside strings are left to
 * `JSON.parse`. Code points are counted as the contract's `maxLength` counts them (a surrogate pair is one); bytes
 * that are not UTF-8 count as at least one each, so a string refused here is over its bound for sure.
 */
import { isAscii } from 'node:buffer';
import { JSON_LIMITS, type ShapeBounds } from './body-bounds.js';

export type JsonPath = (string | number)[];

/** What the scan refused: a bound of the contract at `path`, or one of the limits of every body. */
export type JsonViolation =
  | { kind: 'maxLength' | 'maxItems' | 'maxProperties'; path: JsonPath; limit: number; declared: boolean }
  | { kind: 'depth' | 'values' | 'keyLength' | 'numberLength'; path: JsonPath; limit: number };

export class JsonViolationError extends Error {
  constructor(readonly violation: JsonViolation) {
    super(`JSON body over its bounds: ${violation.kind}`);
    this.name = 'JsonViolationError';
  }
}

export interface JsonLimits {
  maxDepth: number;
  maxValues: number;
  maxKeyLength: number;
  maxNumberLength: number;
}

const enum S {
  Value, // a value must come (top level, after `:`, after `,` in an array)
  ArrayFirst, // after `[`: a value or `]`
  ObjectFirst, // after `{`: a key or `}`
  ObjectKey, // after `,` in an object: a key
  Colon, // after a key
  After, // after a value in a container: `,` or the closing bracket
  End, // after the top-level value: whitespace only
  String,
  Escape,
  UnicodeEscape,
  NumMinus,
  NumZero,
  NumInt,
  NumDot,
  NumFrac,
  NumE,
  NumExpSign,
  NumExp,
  Literal,
  Invalid,
}

interface Frame {
  object: boolean;
  bounds: ShapeBounds;
  /** Keys (object) or items (array) so far. */
  count: number;
  /** The current key of an object (null: not captured, longer than any declared key). */
  key: string | null;
  /** The bounds of the current key's value. */
  child: ShapeBounds;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LITERALS: Record<number, string> = { 0x74: 'true', 0x66: 'false', 0x6e: 'null' };

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/** Code points of a run of string bytes (UTF-8 lead bytes). */
function points(run: Uint8Array): number {
  if (isAscii(run)) return run.length;
  let n = 0;
  for (let i = 0; i < run.length; i++) if ((run[i]! & 0xc0) !== 0x80) n += 1;
  return n;
}

export type ScanResult = 'value' | 'empty' | 'invalid';

export class JsonScanner {
  private state = S.Value;
  private readonly stack: Frame[] = [];
  private values = 0;
  private sawValue = false;
  // the current string
  private stringIsKey = false;
  private stringPoints = 0;
  private stringLimit = 0;
  private stringBounds: ShapeBounds;
  private keyBytes: number[] = [];
  private keyOverflow = false;
  private escapeHex = 0;
  private escapeDigits = 0;
  /** The previous character of the string was an escaped high surrogate (`\uD83D`). */
  private highSurrogate = false;
  // the current number or literal
  private numberLength = 0;
  private literal = '';
  private literalAt = 0;

  constructor(
    private readonly root: ShapeBounds,
    private readonly limits: JsonLimits = JSON_LIMITS,
  ) {
    this.stringBounds = root;
  }

  /** Scans the next bytes; throws JsonViolationError at the first bound passed. */
  write(chunk: Uint8Array): void {
    let quoteAt = -2;
    let slashAt = -2;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      const state = this.state;
      if (state === S.Invalid) return;
      if (state === S.String) {
        // A run of plain string bytes up to the next quote or backslash (each found once per chunk).
        if (quoteAt !== -1 && quoteAt < i) quoteAt = chunk.indexOf(QUOTE, i);
        if (slashAt !== -1 && slashAt < i) slashAt = chunk.indexOf(BACKSLASH, i);
        const stop = Math.min(quoteAt === -1 ? n : quoteAt, slashAt === -1 ? n : slashAt);
        if (stop > i) {
          const run = chunk.subarray(i, stop);
          this.highSurrogate = false;
          this.addPoints(points(run));
          if (this.stringIsKey) this.capture(run);
        }
        i = stop;
        if (i === n) return;
        if (chunk[i] === QUOTE) this.endString();
        else this.state = S.Escape;
        i += 1;
        continue;
      }
      const byte = chunk[i]!;
      if (this.step(byte)) i += 1;
    }
  }

  /** The verdict once the body has ended: one complete value, nothing but whitespace, or not JSON. */
  end(): ScanResult {
    switch (this.state) {
      case S.End:
        return 'value';
      case S.NumZero:
      case S.NumInt:
      case S.NumFrac:
      case S.NumExp:
        return this.stack.length === 0 ? 'value' : 'invalid';
      case S.Value:
        return this.stack.length === 0 && !this.sawValue ? 'empty' : 'invalid';
      default:
        return 'invalid';
    }
  }

  /** One byte outside a string run; false when the byte must be looked at again in the new state. */
  private step(byte: number): boolean {
    switch (this.state) {
      case S.Value:
        if (isWhitespace(byte)) return true;
        this.startValue(byte);
        return true;
      case S.ArrayFirst:
        if (isWhitespace(byte)) return true;
        if (byte === 0x5d) return (this.close(false), true);
        this.startValue(byte);
        return true;
      case S.ObjectFirst:
      case S.ObjectKey:
        if (isWhitespace(byte)) return true;
        if (byte === 0x7d && this.state === S.ObjectFirst) return (this.close(true), true);
        if (byte !== QUOTE) return this.invalid();
        this.startKey();
        return true;
      case S.Colon:
        if (isWhitespace(byte)) return true;
        if (byte !== 0x3a) return this.invalid();
        this.state = S.Value;
        return true;
      case S.After: {
        if (isWhitespace(byte)) return true;
        const top = this.stack[this.stack.length - 1]!;
        if (byte === 0x2c) {
          this.state = top.object ? S.ObjectKey : S.Value;
          return true;
        }
        if (byte === (top.object ? 0x7d : 0x5d)) return (this.close(top.object), true);
        return this.invalid();
      }
      case S.End:
        return isWhitespace(byte) ? true : this.invalid();
      case S.Escape:
        return (this.escape(byte), true);
      case S.UnicodeEscape:
        return (this.unicodeEscape(byte), true);
      case S.Literal:
        if (byte !== this.literal.charCodeAt(this.literalAt)) return this.invalid();
        this.literalAt += 1;
        if (this.literalAt === this.literal.length) this.valueDone();
        return true;
      default:
        return this.number(byte);
    }
  }

  private invalid(): true {
    this.state = S.Invalid;
    return true;
  }

  private path(): JsonPath {
    return this.stack.map((f) => (f.object ? (f.key ?? '…') : f.count - 1));
  }

  private violation(v: JsonViolation): never {
    throw new JsonViolationError(v);
  }

  /** The bounds of the value that starts now (and counts it as an item of its array). */
  private position(): ShapeBounds {
    const top = this.stack[this.stack.length - 1];
    if (!top) return this.root;
    if (top.object) return top.child;
    top.count += 1;
    if (top.count > top.bounds.maxItems) {
      this.violation({
        kind: 'maxItems',
        path: this.path().slice(0, -1),
        limit: top.bounds.maxItems,
        declared: top.bounds.declared,
      });
    }
    return top.bounds.items;
  }

  private startValue(byte: number): void {
    const isContainer = byte === 0x7b || byte === 0x5b;
    const isString = byte === QUOTE;
    const isNumber = byte === 0x2d || isDigit(byte);
    const literal = LITERALS[byte];
    if (!isContainer && !isString && !isNumber && !literal) return void this.invalid();
    const bounds = this.position();
    this.sawValue = true;
    this.values += 1;
    if (this.values > this.limits.maxValues)
      this.violation({ kind: 'values', path: this.path(), limit: this.limits.maxValues });
    if (isContainer) {
      if (this.stack.length >= this.limits.maxDepth)
        this.violation({ kind: 'depth', path: this.path(), limit: this.limits.maxDepth });
      const object = byte === 0x7b;
      this.stack.push({ object, bounds, count: 0, key: null, child: bounds.additional });
      this.state = object ? S.ObjectFirst : S.ArrayFirst;
      return;
    }
    if (isString) {
      this.stringIsKey = false;
      this.stringPoints = 0;
      this.stringLimit = bounds.maxLength;
      this.stringBounds = bounds;
      this.highSurrogate = false;
      this.state = S.String;
      return;
    }
    if (isNumber) {
      this.numberLength = 1;
      this.state = byte === 0x2d ? S.NumMinus : byte === 0x30 ? S.NumZero : S.NumInt;
      return;
    }
    this.literal = literal!;
    this.literalAt = 1;
    this.state = S.Literal;
  }

  private startKey(): void {
    const top = this.stack[this.stack.length - 1]!;
    top.count += 1;
    if (top.count > top.bounds.maxProperties) {
      this.violation({
        kind: 'maxProperties',
        path: this.path().slice(0, -1),
        limit: top.bounds.maxProperties,
        declared: top.bounds.declared,
      });
    }
    top.key = null;
    this.stringIsKey = true;
    this.stringPoints = 0;
    this.stringLimit = this.limits.maxKeyLength;
    this.keyBytes = [];
    this.keyOverflow = false;
    this.highSurrogate = false;
    this.state = S.String;
  }

  private addPoints(count: number): void {
    this.stringPoints += count;
    if (this.stringPoints <= this.stringLimit) return;
    if (this.stringIsKey) this.violation({ kind: 'keyLength', path: this.path(), limit: this.limits.maxKeyLength });
    this.violation({
      kind: 'maxLength',
      path: this.path(),
      limit: this.stringLimit,
      declared: this.stringBounds.declared,
    });
  }

  /** Keeps a key's raw bytes (escapes included) while they are few enough to name a declared key. */
  private capture(bytes: ArrayLike<number>): void {
    if (this.keyOverflow) return;
    if (this.keyBytes.length + bytes.length > 4 * this.limits.maxKeyLength) {
      this.keyOverflow = true;
      this.keyBytes = [];
      return;
    }
    for (let i = 0; i < bytes.length; i++) this.keyBytes.push(bytes[i]!);
  }

  private endString(): void {
    if (!this.stringIsKey) return this.valueDone();
    const top = this.stack[this.stack.length - 1]!;
    let key: string | null = null;
    if (!this.keyOverflow) {
      try {
        key = JSON.parse(`"${Buffer.from(this.keyBytes).toString('utf8')}"`) as string;
      } catch {
        return void this.invalid(); // a control character in the key: JSON.parse refuses it too
      }
    }
    top.key = key;
    top.child = (key !== null ? top.bounds.properties.get(key) : undefined) ?? top.bounds.additional;
    this.keyBytes = [];
    this.state = S.Colon;
  }

  private escape(byte: number): void {
    if (byte === 0x75) {
      this.escapeHex = 0;
      this.escapeDigits = 0;
      this.state = S.UnicodeEscape;
      if (this.stringIsKey) this.capture([BACKSLASH, byte]);
      return;
    }
    // " \ / b f n r t
    if (
      byte !== QUOTE &&
      byte !== BACKSLASH &&
      byte !== 0x2f &&
      byte !== 0x62 &&
      byte !== 0x66 &&
      byte !== 0x6e &&
      byte !== 0x72 &&
      byte !== 0x74
    ) {
      return void this.invalid();
    }
    if (this.stringIsKey) this.capture([BACKSLASH, byte]);
    this.highSurrogate = false;
    this.state = S.String;
    this.addPoints(1);
  }

  private unicodeEscape(byte: number): void {
    const digit = hexValue(byte);
    if (digit < 0) return void this.invalid();
    if (this.stringIsKey) this.capture([byte]);
    this.escapeHex = this.escapeHex * 16 + digit;
    this.escapeDigits += 1;
    if (this.escapeDigits < 4) return;
    const code = this.escapeHex;
    this.state = S.String;
    if (this.highSurrogate && code >= 0xdc00 && code <= 0xdfff) {
      this.highSurrogate = false; // the second half of a pair: one code point with the first
      return;
    }
    this.highSurrogate = code >= 0xd800 && code <= 0xdbff;
    this.addPoints(1);
  }

  /** A byte of a number; false when it ends the number (the byte is looked at again). */
  private number(byte: number): boolean {
    const digit = isDigit(byte);
    let next: S | null;
    switch (this.state) {
      case S.NumMinus:
        next = byte === 0x30 ? S.NumZero : digit ? S.NumInt : null;
        if (next === null) return this.invalid();
        break;
      case S.NumZero:
        next = byte === 0x2e ? S.NumDot : byte === 0x65 || byte === 0x45 ? S.NumE : null;
        break;
      case S.NumInt:
        next = digit ? S.NumInt : byte === 0x2e ? S.NumDot : byte === 0x65 || byte === 0x45 ? S.NumE : null;
        break;
      case S.NumDot:
        if (!digit) return this.invalid();
        next = S.NumFrac;
        break;
      case S.NumFrac:
        next = digit ? S.NumFrac : byte === 0x65 || byte === 0x45 ? S.NumE : null;
        break;
      case S.NumE:
        next = byte === 0x2b || byte === 0x2d ? S.NumExpSign : digit ? S.NumExp : null;
        if (next === null) return this.invalid();
        break;
      case S.NumExpSign:
        if (!digit) return this.invalid();
        next = S.NumExp;
        break;
      case S.NumExp:
        next = digit ? S.NumExp : null;
        break;
      default:
        return this.invalid();
    }
    if (next === null) {
      this.valueDone();
      return false;
    }
    this.numberLength += 1;
    if (this.numberLength > this.limits.maxNumberLength) {
      this.violation({ kind: 'numberLength', path: this.path(), limit: this.limits.maxNumberLength });
    }
    this.state = next;
    return true;
  }

  private valueDone(): void {
    this.state = this.stack.length === 0 ? S.End : S.After;
  }

  private close(object: boolean): void {
    const top = this.stack[this.stack.length - 1];
    if (!top || top.object !== object) return void this.invalid();
    this.stack.pop();
    this.valueDone();
  }
}
