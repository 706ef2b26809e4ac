/**
 * A table as the code sees it: one entry per column, keyed by the row property it fills, with the SQL name and a
 * parser for what `pg` returns (MikroORM's pool hands timestamps over as text, and `bigint` always is text). The row
 * type is written once as a TypeScript interface; `defineTable` only accepts a column map that covers exactly its
 * properties, so a property without a column (or a column without a property) does not compile, and a schema test
 * compares the columns with the migrated database.
 */

export interface Column<T> {
  readonly name: string;
  /** The SQL type a parameter for it is cast to in INSERT … SELECT (where PostgreSQL cannot infer it), if any. */
  readonly cast?: string;
  parse(raw: unknown): T;
}

/** Parses what PostgreSQL returns for timestamptz (`2026-01-01 10:00:00.123+00`, or a Date) into a Date. */
function toDate(value: unknown): Date {
  if (value instanceof Date) return value;
  let s = String(value).trim().replace(' ', 'T');
  if (/[+-]\d\d$/.test(s)) s += ':00';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new Error('unreadable timestamp from the database');
  return d;
}

const nullable =
  <T>(parse: (raw: unknown) => T) =>
  (raw: unknown): T | null =>
    raw === null || raw === undefined ? null : parse(raw);

export const column = {
  text: (name: string): Column<string> => ({ name, parse: (raw) => String(raw) }),
  textOrNull: (name: string): Column<string | null> => ({ name, parse: nullable((raw) => String(raw)) }),
  /** A string-valued enum (a CHECK constraint keeps the database to the listed values). */
  oneOf: <T extends string>(name: string): Column<T> => ({ name, parse: (raw) => String(raw) as T }),
  int: (name: string): Column<number> => ({ name, parse: (raw) => Number(raw) }),
  intOrNull: (name: string): Column<number | null> => ({ name, parse: nullable((raw) => Number(raw)) }),
  /** `bigint` / `bigserial`, kept as text (it may exceed 2^53). */
  bigint: (name: string): Column<string> => ({ name, parse: (raw) => String(raw) }),
  bool: (name: string): Column<boolean> => ({ name, parse: (raw) => raw === true || raw === 't' || raw === 'true' }),
  date: (name: string): Column<Date> => ({ name, parse: toDate }),
  dateOrNull: (name: string): Column<Date | null> => ({ name, parse: nullable(toDate) }),
  bytes: (name: string): Column<Buffer> => ({
    name,
    parse: (raw) => (Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array)),
  }),
  bytesOrNull: (name: string): Column<Buffer | null> => ({
    name,
    parse: nullable((raw) => (Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array))),
  }),
  uuidOrNull: (name: string): Column<string | null> => ({ name, parse: nullable((raw) => String(raw)) }),
  /**
   * A `jsonb` value (pg writes an object parameter as JSON; it may read jsonb back parsed or as text, so both are
   * taken). The row type says what the JSON holds; a CHECK constraint in the migration keeps the database to it.
   */
  /** A `text[]` (pg reads it back as an array; a parameter is cast, so a JS array is written as one). */
  textArray: (name: string): Column<string[]> => ({
    name,
    cast: 'text[]',
    parse: (raw) => (Array.isArray(raw) ? raw.map(String) : []),
  }),
  jsonOrNull: <T extends object>(name: string): Column<T | null> => ({
    name,
    parse: nullable((raw) => (typeof raw === 'string' ? JSON.parse(raw) : raw) as T),
  }),
};

export type Columns<Row> = { readonly [K in keyof Row]-?: Column<Row[K]> };

export interface Table<Row> {
  readonly name: string;
  readonly columns: Columns<Row>;
  /** `col_a, col_b, …` in property order, for SELECT and RETURNING lists (never `*`: see push-repository.ts). */
  readonly list: string;
  /** `:propA, :propB, …` matching `list`, for INSERT … VALUES. */
  readonly placeholders: string;
  /** A row as pg returned it (keyed by SQL names) → the typed row. */
  fromRow(raw: Record<string, unknown>): Row;
}

export function defineTable<Row>(name: string, columns: Columns<Row>): Table<Row> {
  const entries = Object.entries(columns) as [keyof Row & string, Column<unknown>][];
  return {
    name,
    columns,
    list: entries.map(([, c]) => c.name).join(', '),
    placeholders: entries.map(([key, c]) => (c.cast ? `:${key}::${c.cast}` : `:${key}`)).join(', '),
    fromRow(raw) {
      const row = {} as Record<string, unknown>;
      for (const [key, c] of entries) row[key] = c.parse(raw[c.name]);
      return row as Row;
    },
  };
}
