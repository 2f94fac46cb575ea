/**
 * `proxycheck` entry point (`bun src/cli/main.ts ...`, `npm run cli -- ...`,
 * or the package's `proxycheck` bin, src/cli/bin.mjs): builds the CliIo from
 * the process, runs the command, prints a CliError's message on stderr and
 * exits with its code (src/cli/exit-codes.ts). Ctrl-C aborts the running
 * command (exit 130); a second Ctrl-C exits at once.
 *
 * Started by the Node launcher (src/cli/bin.mjs sets PROXYCHECK_LAUNCHER_PID)
 * or by npm (`npm run cli`: npm_command is set), it ends (exit 143) when
 * that parent is gone: a launcher killed with SIGKILL, or npm killed by its
 * pid (its shell dies without passing the signal on), leaves no CLI running.
 * Run by hand (a shell, nohup) it never watches its parent.
 */
import { homedir } from 'node:os';
import { parseCommandLine, USAGE } from './args';
import { runCommand } from './commands';
import { CliError, EXIT } from './exit-codes';
import type { CliIo, OutStream } from './io';
import { ENTRY_ERROR_CODES } from '../error-codes';

function outStream(s: NodeJS.WriteStream): OutStream {
  return {
    write: (x) => {
      s.write(x);
    },
    get isTTY() {
      return s.isTTY === true;
    },
    get columns() {
      return s.isTTY ? s.columns : undefined;
    },
  };
}

/** One line from stdin; with `hidden` on a TTY the typed characters are not echoed. */
function readLine(prompt: string, hidden: boolean, signal: AbortSignal): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let buf = '';
    const raw = hidden && stdin.isTTY;
    // echo off before the prompt shows: a key pasted the moment it appears is not echoed
    const done = (err: unknown, value?: string) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      if (raw) stdin.setRawMode(false);
      stdin.pause();
      if (raw) process.stderr.write('\n');
      if (err !== null) reject(err);
      else resolve(value ?? '');
    };
    const onAbort = () => done(signal.reason);
    const onEnd = () => done(null, buf);
    const onData = (d: Buffer | string) => {
      const text = typeof d === 'string' ? d : d.toString('utf8');
      for (const ch of text) {
        if (ch === '\n' || ch === '\r') return done(null, buf);
        if (raw && ch === '\u0003') return done(new CliError(EXIT.INTERRUPTED, ENTRY_ERROR_CODES.CLI_INTERRUPTED, 'Interrupted.'));
        if (raw && ch === '\u0004') return done(null, buf);
        if (raw && (ch === '\u007f' || ch === '\b')) buf = buf.slice(0, -1);
        else buf += ch;
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (raw) stdin.setRawMode(true);
    if (prompt !== '') process.stderr.write(prompt);
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}

function flush(): Promise<void> {
  return new Promise((resolve) => {
    let n = 2;
    const one = () => {
      if (--n === 0) resolve();
    };
    process.stdout.write('', one);
    process.stderr.write('', one);
  });
}

/** How often the CLI looks whether the process that started it is still there. */
export const PARENT_POLL_MS = 250;

/** The parent pid to outlive no longer (null: run by hand, nothing watched). Pure. */
export function watchedParent(env: Record<string, string | undefined>, ppid: number): number | null {
  const launcher = Number(env.PROXYCHECK_LAUNCHER_PID);
  if (Number.isSafeInteger(launcher) && launcher > 1) return launcher;
  return env.npm_command !== undefined && env.npm_command !== '' && ppid > 1 ? ppid : null;
}

function exitWithParent(): void {
  const parent = watchedParent(process.env, process.ppid);
  if (parent === null) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    if (process.stderr.isTTY) process.stderr.write('\x1b[?25h');
    process.exit(EXIT.ORPHANED);
  }, PARENT_POLL_MS);
  timer.unref();
}

export async function cliMain(argv: readonly string[]): Promise<number> {
  exitWithParent();
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) {
      if (process.stderr.isTTY) process.stderr.write('\x1b[?25h\n');
      process.exit(EXIT.INTERRUPTED);
    }
    controller.abort(new CliError(EXIT.INTERRUPTED, ENTRY_ERROR_CODES.CLI_INTERRUPTED, 'Interrupted.'));
  };
  process.on('SIGINT', onSigint);
  const io: CliIo = {
    stdout: outStream(process.stdout),
    stderr: outStream(process.stderr),
    stdin: {
      get isTTY() {
        return process.stdin.isTTY === true;
      },
      text: async () => {
        const chunks: Buffer[] = [];
        for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
        return Buffer.concat(chunks).toString('utf8');
      },
      readLine: (prompt, hidden) => readLine(prompt, hidden, controller.signal),
    },
    env: process.env,
    home: homedir(),
    now: () => Date.now(),
    signal: controller.signal,
    flush,
  };
  let code: number;
  try {
    const { global, command } = parseCommandLine(argv);
    code = await runCommand(command, global, io);
  } catch (err) {
    const e =
      err instanceof CliError
        ? err
        : controller.signal.aborted
          ? (controller.signal.reason as CliError)
          : new CliError(EXIT.INTERNAL, ENTRY_ERROR_CODES.CLI_INTERNAL, `unexpected failure: ${(err as Error)?.stack ?? String(err)}`);
    process.stderr.write(`proxycheck: ${e.message}\n`);
    if (e.exitCode === EXIT.USAGE && e.code === ENTRY_ERROR_CODES.CLI_USAGE) process.stderr.write(`\n${USAGE}\n`);
    code = e.exitCode;
  } finally {
    process.off('SIGINT', onSigint);
  }
  await flush();
  return code;
}

if (import.meta.main) {
  process.exit(await cliMain(process.argv.slice(2)));
}
