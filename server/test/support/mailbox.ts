/**
 * A real SMTP server in the test process (the `smtp-server` package) and the messages it accepted, parsed
 * (`mailparser`): what the server under test sends is read as a recipient's mail client would read it. It can be
 * stopped and started again on the same port (a relay that is down), answer a recipient with a temporary (451) or
 * permanent (550) refusal, or hold a message's data without answering (a delivery in flight).
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

interface ReceivedMail {
  /** The envelope's recipients (RCPT TO). */
  to: string[];
  from: string;
  parsed: ParsedMail;
  /** The raw message as received. */
  raw: string;
}

export interface Mailbox {
  port: number;
  /** `smtp://user:pass@127.0.0.1:<port>` (the relay takes any credentials). */
  url: string;
  messages: ReceivedMail[];
  /** Answers RCPT TO for this address with this reply (e.g. `451 4.7.1 try later`), or normally again (null). */
  refuse(address: string, reply: { code: number; message: string } | null): void;
  /** While set, the data of a message is taken but never answered (the client waits until it gives up). */
  holdData(on: boolean): void;
  /** Resolves when a message's data is being held. */
  dataHeld(): Promise<void>;
  /** Waits until at least `count` messages arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
  /** Listens again on the same port after `stop`. */
  start(): Promise<void>;
}

export async function startMailbox(port = 0): Promise<Mailbox> {
  const messages: ReceivedMail[] = [];
  const refusals = new Map<string, { code: number; message: string }>();
  let hold = false;
  let heldWaiters: (() => void)[] = [];
  let server: SMTPServer;
  const make = () =>
    new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onAuth(auth, _session, callback) {
        callback(null, { user: auth.username ?? 'user' });
      },
      onRcptTo(address, _session, callback) {
        const refusal = refusals.get(address.address.toLowerCase());
        if (!refusal) return callback();
        const error = new Error(refusal.message) as Error & { responseCode: number };
        error.responseCode = refusal.code;
        return callback(error);
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (hold) {
            for (const w of heldWaiters) w();
            heldWaiters = [];
            return; // never answered: the message is not accepted
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (parsed) => {
              messages.push({
                to: session.envelope.rcptTo.map((r) => r.address),
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                parsed,
                raw,
              });
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
  let actualPort = port;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = make();
      server.on('error', () => undefined);
      const s = server.listen(actualPort, '127.0.0.1', () => {
        actualPort = (s.address() as AddressInfo).port;
        resolve();
      });
      s.once('error', reject);
    });
  await listen();
  return {
    get port() {
      return actualPort;
    },
    get url() {
      return `smtp://relay-user:relay%20pass@127.0.0.1:${actualPort}`;
    },
    messages,
    refuse(address, reply) {
      if (reply) refusals.set(address.toLowerCase(), reply);
      else refusals.delete(address.toLowerCase());
    },
    holdData(on) {
      hold = on;
    },
    dataHeld() {
      return new Promise((resolve) => heldWaiters.push(resolve));
    },
    async waitFor(count, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} messages, got ${messages.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return messages;
    },
    stop() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
    start: listen,
  };
}
