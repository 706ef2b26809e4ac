/** A setting with a bad value: names the variable; the message says what it accepts (never a secret's value). */
export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingsError';
  }
}
