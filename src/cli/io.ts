/**
 * The CLI's view of its process: output streams, input, environment, clock
 * and the Ctrl-C signal, as one `CliIo` object (main.ts builds it from
 * `process`), plus the terminal traits derived from it (pure) and input
 * reading: `check`'s inputs, each a file, standard input ("-") or an inline
 * proxy address.
 */
import { readFile } from 'node:fs/promises';
import { errorText } from '../errors';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { parseProxyLine } from '../proxy/parse';
import { CliError, EXIT } from './exit-codes';

export interface OutStream {
  write(s: string | Uint8Array): void;
  readonly isTTY: boolean;
  /** Terminal width when a TTY. */
  readonly columns: number | undefined;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  stdin: { readonly isTTY: boolean; text(): Promise<string>; readLine(prompt: string, hidden: boolean): Promise<string> };
  env: Record<string, string | undefined>;
  home: string;
  now(): number;
  /** Aborted (with a CliError INTERRUPTED) on Ctrl-C. */
  signal: AbortSignal;
  /** Resolves when everything written so far has been handed to the OS. */
  flush(): Promise<void>;
}

export interface TerminalTraits {
  /** ANSI colours on this stream. */
  color: boolean;
  /** Plain ASCII instead of block and box characters. */
  ascii: boolean;
  columns: number;
}

/**
 * Colour: a TTY, no NO_COLOR (https://no-color.org), TERM not "dumb", no
 * --no-color. ASCII: TERM "dumb", or a locale variable that is set and does
 * not name UTF-8 (LANG=C, LC_ALL=POSIX, ...).
 */
export function terminalTraits(stream: Pick<OutStream, 'isTTY' | 'columns'>, env: Record<string, string | undefined>, noColorFlag: boolean): TerminalTraits {
  const dumb = env.TERM === 'dumb';
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  return {
    color: stream.isTTY && !noColorFlag && !dumb && (env.NO_COLOR === undefined || env.NO_COLOR === ''),
    ascii: dumb || (locale !== undefined && locale !== '' && !/utf-?8/i.test(locale)),
    columns: stream.columns !== undefined && stream.columns > 0 ? stream.columns : 80,
  };
}

/** The text of `source` (a path, or "-" for standard input). Unreadable input is a usage error. */
export async function readInput(source: string, io: CliIo): Promise<string> {
  if (source === '-') {
    if (io.stdin.isTTY) io.stderr.write('Reading proxies from standard input, one per line; end with Ctrl-D.\n');
    return io.stdin.text();
  }
  try {
    return await readFile(source, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : errorText(err);
    throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_INPUT_UNREADABLE, `cannot read ${source}: ${why}`, { cause: err });
  }
}

/** Where `check`'s entries came from. */
export interface InputSource {
  kind: 'file' | 'stdin' | 'inline';
  /** The file's path, or the address as typed. */
  name: string;
}

/**
 * `check`'s inputs in order: "-" is standard input, an existing file is read,
 * and an argument that is no file but reads as one proxy address
 * (src/proxy/parse.ts) is that address itself. Anything else is the file
 * error ("cannot read x: no such file").
 */
export async function readInputs(sources: readonly string[], io: CliIo): Promise<{ lines: string[]; from: InputSource[] }> {
  const lines: string[] = [];
  const from: InputSource[] = [];
  for (const source of sources) {
    let text: string;
    try {
      text = await readInput(source, io);
    } catch (err) {
      const missing = (err as CliError).cause !== undefined && ((err as CliError).cause as NodeJS.ErrnoException).code === 'ENOENT';
      if (missing && parseProxyLine(source.trim()) !== null) {
        lines.push(source.trim());
        from.push({ kind: 'inline', name: source.trim() });
        continue;
      }
      throw err;
    }
    lines.push(...listLines(text));
    from.push({ kind: source === '-' ? 'stdin' : 'file', name: source });
  }
  return { lines, from };
}

/** "proxies.txt", "standard input", "2 addresses", "a.txt, standard input and 1 address". Pure. */
export function describeInputs(from: readonly InputSource[]): string {
  const parts: string[] = [];
  for (const s of from) {
    if (s.kind === 'file') parts.push(s.name);
    else if (s.kind === 'stdin') parts.push('standard input');
  }
  const inline = from.filter((s) => s.kind === 'inline').length;
  if (inline > 0) parts.push(`${inline} ${inline === 1 ? 'address' : 'addresses'} on the command line`);
  return parts.length <= 1 ? (parts[0] ?? 'nothing') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/** Non-blank, non-comment lines of a proxy list, trimmed. */
export function listLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r\n|\n|\r/)) {
    const line = raw.trim();
    if (line !== '' && !line.startsWith('#')) out.push(line);
  }
  return out;
}
