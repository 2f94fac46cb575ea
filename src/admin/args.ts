/**
 * Pure parser for the admin command: argv (`<command> --flag value ...`) or an
 * admin HTTP body (`{email, checks, temp, unlimitedUntil, label, key}`) ->
 * one validated AdminRequest. Both paths share the option specs, so the CLI
 * and the HTTP API accept exactly the same things. Throws UsageError with a
 * one-line message naming the problem. No I/O.
 */
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';

export const ADMIN_COMMANDS = ['create-account', 'issue-key', 'revoke-key', 'top-up', 'set-plan', 'clear-plan', 'show', 'list-accounts'] as const;
export type AdminCommand = (typeof ADMIN_COMMANDS)[number];

export type AdminRequest =
  | { command: 'create-account'; email: string; checks?: number; temp?: number; unlimitedUntil?: string }
  | { command: 'issue-key'; email: string; label?: string }
  | { command: 'revoke-key'; key: string }
  | { command: 'top-up'; email: string; checks: number; temp?: boolean }
  | { command: 'set-plan'; email: string; unlimitedUntil: string }
  | { command: 'clear-plan'; email: string }
  | { command: 'show'; email: string }
  | { command: 'list-accounts'; limit?: number };

/** list-accounts prints at most this many accounts unless --limit says otherwise. */
export const LIST_ACCOUNTS_DEFAULT_LIMIT = 1000;

/** Bad admin arguments (the admin command and the admin HTTP API branch on it: exit 2 / 400). */
export class UsageError extends ServiceError {
  constructor(message: string) {
    super(JOB_ERROR_CODES.USAGE, message);
    this.name = 'UsageError';
  }
}

type Kind = 'email' | 'count0' | 'count1' | 'iso' | 'text' | 'key' | 'flag';
interface OptionSpec {
  flag: string;
  key: string;
  kind: Kind;
  required: boolean;
}
const opt = (flag: string, key: string, kind: Kind, required = false): OptionSpec => ({ flag, key, kind, required });

const SPECS: Record<AdminCommand, readonly OptionSpec[]> = {
  'create-account': [
    opt('email', 'email', 'email', true),
    opt('checks', 'checks', 'count0'),
    opt('temp', 'temp', 'count0'),
    opt('unlimited-until', 'unlimitedUntil', 'iso'),
  ],
  'issue-key': [opt('email', 'email', 'email', true), opt('label', 'label', 'text')],
  'revoke-key': [opt('key', 'key', 'key', true)],
  'top-up': [opt('email', 'email', 'email', true), opt('checks', 'checks', 'count1', true), opt('temp', 'temp', 'flag')],
  'set-plan': [opt('email', 'email', 'email', true), opt('unlimited-until', 'unlimitedUntil', 'iso', true)],
  'clear-plan': [opt('email', 'email', 'email', true)],
  show: [opt('email', 'email', 'email', true)],
  'list-accounts': [opt('limit', 'limit', 'count1')],
};

export const USAGE = [
  'usage: admin <command> [--flags]',
  '  create-account --email E [--checks N] [--temp N] [--unlimited-until ISO]',
  '  issue-key --email E [--label L]',
  '  revoke-key --key K',
  '  top-up --email E --checks N [--temp]',
  '  set-plan --email E --unlimited-until ISO',
  '  clear-plan --email E',
  '  show --email E',
  `  list-accounts [--limit N]          (the oldest first; default ${LIST_ACCOUNTS_DEFAULT_LIMIT})`,
  'where: ADMIN_URL (with ADMIN_TOKEN: a running server\'s admin listener), else DATABASE_URL, else DATA_DIR (through its running server, or opened directly)',
].join('\n');

const MAX_COUNT = 1_000_000_000_000;
const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function isAdminCommand(s: string): s is AdminCommand {
  return (ADMIN_COMMANDS as readonly string[]).includes(s);
}

function convert(spec: OptionSpec, raw: unknown): unknown {
  const name = `--${spec.flag}`;
  switch (spec.kind) {
    case 'flag':
      if (raw === true || raw === 'true') return true;
      if (raw === false || raw === 'false') return false;
      throw new UsageError(`${name} takes no value (or true/false)`);
    case 'count0':
    case 'count1': {
      const min = spec.kind === 'count0' ? 0 : 1;
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(n) || n < min || n > MAX_COUNT) {
        throw new UsageError(`${name} must be a whole number from ${min} to ${MAX_COUNT}, got ${JSON.stringify(raw)}`);
      }
      return n;
    }
    case 'email': {
      if (typeof raw !== 'string' || !/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(raw.trim())) {
        throw new UsageError(`${name} must be an e-mail address, got ${JSON.stringify(raw)}`);
      }
      return raw.trim().toLowerCase();
    }
    case 'iso': {
      const t = typeof raw === 'string' ? raw.trim() : '';
      const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/.test(t) || !t.includes('T');
      const ms = ISO_RE.test(t) ? Date.parse(hasZone ? t : `${t}Z`) : NaN;
      if (Number.isNaN(ms)) throw new UsageError(`${name} must be an ISO 8601 date or date-time, got ${JSON.stringify(raw)}`);
      return new Date(ms).toISOString();
    }
    case 'text':
      if (typeof raw !== 'string' || raw.length > 200) throw new UsageError(`${name} must be a string of at most 200 characters`);
      return raw;
    case 'key':
      if (typeof raw !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(raw.trim())) throw new UsageError(`${name} must be an API key`);
      return raw.trim();
  }
}

function build(command: AdminCommand, values: Map<string, unknown>): AdminRequest {
  const out: Record<string, unknown> = { command };
  for (const spec of SPECS[command]) {
    if (!values.has(spec.flag)) {
      if (spec.required) throw new UsageError(`${command}: --${spec.flag} is required`);
      continue;
    }
    out[spec.key] = convert(spec, values.get(spec.flag));
  }
  return out as AdminRequest;
}

function specFor(command: AdminCommand, name: string): OptionSpec {
  const spec = SPECS[command].find((s) => s.flag === name || s.key === name);
  if (spec === undefined) {
    throw new UsageError(`${command}: unknown option --${name} (accepted: ${SPECS[command].map((s) => `--${s.flag}`).join(', ')})`);
  }
  return spec;
}

function commandOf(name: string | undefined): AdminCommand {
  if (name === undefined || name === '') throw new UsageError(`no command given; commands: ${ADMIN_COMMANDS.join(', ')}`);
  if (!isAdminCommand(name)) throw new UsageError(`unknown command "${name}"; commands: ${ADMIN_COMMANDS.join(', ')}`);
  return name;
}

/** `['top-up', '--email', 'a@b', '--checks', '5', '--temp']` -> AdminRequest. */
export function parseArgv(argv: readonly string[]): AdminRequest {
  const command = commandOf(argv[0]);
  const values = new Map<string, unknown>();
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as string;
    const m = /^--([a-zA-Z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (m === null) throw new UsageError(`${command}: unexpected argument "${arg}"`);
    const spec = specFor(command, m[1] as string);
    if (values.has(spec.flag)) throw new UsageError(`${command}: --${spec.flag} given twice`);
    let value: unknown = m[2];
    if (value === undefined) {
      if (spec.kind === 'flag') value = true;
      else {
        const next = argv[i + 1];
        if (next === undefined || /^--[a-zA-Z]/.test(next)) throw new UsageError(`${command}: --${spec.flag} needs a value`);
        value = next;
        i++;
      }
    }
    values.set(spec.flag, value);
  }
  return build(command, values);
}

/** An admin HTTP body (`{email, checks, ...}`, camelCase or flag names) -> AdminRequest. */
export function parseAdminBody(command: string, body: unknown): AdminRequest {
  const cmd = commandOf(command);
  if (body === null || body === undefined) body = {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new UsageError(`${cmd}: the body must be a JSON object`);
  const values = new Map<string, unknown>();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (k === 'command') continue;
    if (v === undefined || v === null) continue;
    const spec = specFor(cmd, k);
    if (values.has(spec.flag)) throw new UsageError(`${cmd}: --${spec.flag} given twice`);
    values.set(spec.flag, v);
  }
  return build(cmd, values);
}

/** The HTTP body the CLI sends for a request (inverse of parseAdminBody). */
export function toAdminBody(req: AdminRequest): Record<string, unknown> {
  const { command: _command, ...rest } = req;
  return rest;
}
