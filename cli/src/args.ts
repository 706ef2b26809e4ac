/**
 * A command's parsed arguments (what `parseCommand` in command.ts makes of argv): below the command table and the
 * context, which both name it, so that neither imports the other back (ARCHITECTURE.md, "Floors").
 */
import { usageError } from './exit.js';

/** A command's parsed arguments, with typed, checked accessors. */
export class Args {
  constructor(
    readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>,
    readonly positionals: string[],
  ) {}

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  list(name: string): string[] {
    const value = this.values[name];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  }

  /** An integer option within bounds, or undefined when absent. */
  int(name: string, min: number, max: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max)
      throw usageError(`--${name} must be a whole number from ${min} to ${max}`);
    return Number(text);
  }

  /** Two options that cannot go together. */
  exclusive(...names: string[]): void {
    const given = names.filter((n) => this.values[n] !== undefined && this.values[n] !== false);
    if (given.length > 1) throw usageError(`--${given[0]} and --${given[1]} cannot be used together`);
  }
}
