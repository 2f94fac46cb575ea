/**
 * The CLI's command line: `proxycheck [options] <command> [args]` -> a typed
 * invocation, or a usage CliError (exit 2). Pure (node:util parseArgs only).
 *
 * Options may come before or after the command. Global options: --key,
 * --url, --json, --no-color, --help, --version. `check` options: --type
 * (http, socks4, socks5 or auto), --region, --timeout, --samples (1..10),
 * --no-https, --custom-url (repeatable), --case-sensitive, --out, --format,
 * --only-working, --simple, --scheme, --job-id, --async. `me`: --links. `status
 * <jobId>`, `wait <jobId>` (with --out, --format, --only-working) and
 * `cancel <jobId>` name a check job (docs/API.md "Checks that outlive their
 * connection"). `pool`: its actions and their options are
 * pool-args.ts's; `webhook`'s are webhook-args.ts's.
 *
 * ClearProxy's CLI habits are accepted: `check` takes several inputs, each a
 * file, `-` (standard input, once) or an inline address (`check
 * 1.2.3.4:8080 5.6.7.8:3128`; which is which is decided when they are read,
 * src/cli/io.ts: an existing file wins); `--simple` = only the working
 * proxies' addresses, one per line (the txt form), on standard output
 * unless --out says where; `set-key` is `login`, and both take the key as
 * an argument too (`set-key pc_...`). `--scheme` (with the txt form:
 * --simple, or --out/--format txt) writes each line as
 * `<protocol>://[user:pass@]host:port` (src/results/export.ts, as the
 * service's `.txt?scheme=true`).
 *
 * `--custom-url URL[,codes][,text]`: codes are HTTP statuses joined by `|`
 * or `+` (e.g. `200|204`); everything after the codes' comma is the required
 * text (it may contain commas). When the part after the URL's comma is not a
 * list of codes, all of it is the text (`URL,Example Domain`); `URL,,text`
 * says "no codes" explicitly. A comma inside the URL must be written `%2C`.
 *
 * `--format` defaults to the extension of `--out` (.csv, .txt, else json);
 * `--format` without `--out` is a usage error (`--out -` writes to stdout).
 */
import { parseArgs } from 'node:util';
import { errorText } from '../errors';
import { isJobId, JOB_ID_RULE } from '../job-id';
import { CHECK_TYPES, type CheckType } from '../proxy/types';
import { usageError } from './exit-codes';
import { parsePoolArgs, POOL_OPTIONS, POOL_USAGE, type PoolCommand } from './pool-args';
import { parseWebhookArgs, WEBHOOK_OPTIONS, WEBHOOK_USAGE, type WebhookCommand } from './webhook-args';
import { fmtInt } from './progress-bar';

export const OUTPUT_FORMATS = Object.freeze(['json', 'csv', 'txt'] as const);
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export const COMMANDS = Object.freeze(['check', 'status', 'wait', 'cancel', 'pool', 'webhook', 'me', 'regions', 'health', 'login', 'set-key', 'help'] as const);
export type CommandName = (typeof COMMANDS)[number];

/**
 * Checks (entries x --samples) above which a plain `check` submits
 * asynchronously and follows the job (check-command.ts). A region probes
 * 12 288 at once by default, so a list up to about this size is done in about
 * one timeout (20 s at most, plus custom URLs), well inside the 60 s many
 * proxies allow a request; a bigger one can take minutes.
 */
export const ASYNC_THRESHOLD = 10_000;

export const TIMEOUT_MIN = 1000;
export const TIMEOUT_MAX = 20000;
/** --samples: probes per proxy, each on a fresh connection (docs/API.md "samples"). */
export const SAMPLES_MIN = 1;
export const SAMPLES_MAX = 10;

/** One rule of the /check body's `customUrls`. */
export interface CustomUrlSpec {
  url: string;
  requiredStatusCodes?: number[];
  requiredText?: string;
  caseSensitive?: boolean;
}

export interface GlobalOptions {
  key?: string;
  url?: string;
  /** Print the API's JSON instead of the human rendering. */
  json: boolean;
  /** false with --no-color; undefined = decide from the terminal and NO_COLOR. */
  color?: false;
}

export interface CheckCommand {
  name: 'check';
  /** What to check, in order: file paths, "-" for standard input (at most once), or inline proxy addresses. */
  sources: string[];
  /** --type: CHECK_TYPES, the three protocols or `auto` (each tried; docs/API.md "type auto"). */
  type?: CheckType;
  region?: string;
  timeout?: number;
  /** Probes per proxy (1..10); absent = the server's default (1). */
  samples?: number;
  /** false with --no-https (no https check); absent = the server's default (on). */
  https?: false;
  customUrls: CustomUrlSpec[];
  /** A file path, or "-" for standard output. */
  out?: string;
  format: OutputFormat;
  onlyWorking: boolean;
  /** --simple: the output is the working proxies' addresses only (format txt; standard output without --out). */
  simple: boolean;
  /** --scheme: the txt lines carry the protocol, `socks5://host:port` (as `.txt?scheme=true`). */
  scheme: boolean;
  jobId?: string;
  /** Submit (Prefer: respond-async), print the job id and return. */
  async: boolean;
}

/** `wait <jobId>`: follow a job to its end, then print (and save) its result as `check` does. */
export interface WaitCommand {
  name: 'wait';
  jobId: string;
  out?: string;
  format: OutputFormat;
  onlyWorking: boolean;
  scheme: boolean;
}

export type Command =
  | CheckCommand
  | WaitCommand
  | { name: 'status'; jobId: string }
  | { name: 'cancel'; jobId: string }
  | PoolCommand
  | WebhookCommand
  | { name: 'me'; links: boolean }
  | { name: 'regions' }
  | { name: 'health' }
  /** `login` and its alias `set-key`; `key` when given as the argument. */
  | { name: 'login'; key?: string }
  | { name: 'help'; topic?: CommandName }
  | { name: 'version' };

export interface Invocation {
  global: GlobalOptions;
  command: Command;
}

export const USAGE = `usage: proxycheck [--key KEY] [--url URL] [--json] [--no-color] <command> [options]

commands:
  check <input>...  check proxies: files of one proxy per line, - for standard input, or addresses
                    (host:port, user:pass@host:port or host:port:user:pass)
  status <jobId>    a check job's state and progress (its summary once completed)
  wait <jobId>      follow a check job (live bar) and print its result as check does
  cancel <jobId>    stop a running check job; the checks not performed are refunded
  pool <action>     pools of proxies kept checked: create, list, show, add, remove, pause, resume,
                    delete, working (the proxies working now, one per line), watch (live events),
                    gateway (the proxy URL that rotates over the pool)
  webhook <action>  events pushed to your URL (signed): add, list, test, deliveries, rm
  me                balance, plan, 30-day usage chart, recent checks
  regions           the regions a check can run from
  health            service status
  login [KEY]       save the API key and base URL to the config file (alias: set-key)
  help [command]    this text, or a command's options

the key and base URL come from --key/--url, else PROXYCHECK_API_KEY/PROXYCHECK_URL,
else the config file written by \`proxycheck login\`; the URL defaults to http://127.0.0.1:3000.
exit codes: 0 ok, 2 usage, 3 auth (401), 4 not enough checks (402), 5 other 4xx, 6 network, 5xx or a job
that failed or was cancelled, 130 Ctrl-C.`;

const LOGIN_USAGE = `usage: proxycheck login [KEY] [--url URL]     (alias: proxycheck set-key KEY)

  verifies the key with GET /me, then writes {url, key} to
  $XDG_CONFIG_HOME/proxycheck/config.json (or ~/.config/proxycheck/config.json), mode 0600.
  Without KEY (or --key, or PROXYCHECK_API_KEY) the key is read from standard input,
  which keeps it out of the shell's history. A lost key: the operator issues a new one
  (npm run admin -- issue-key --email <account>).`;

export const COMMAND_USAGE: Record<CommandName, string> = {
  check: `usage: proxycheck check <input>... [options]

  each input is a file (one proxy per line), - for standard input, or a proxy address:
  proxycheck check proxies.txt   proxycheck check 1.2.3.4:8080 5.6.7.8:3128   cat list | proxycheck check -

  --type http|socks4|socks5|auto   proxy protocol (server default: http); auto tries all three
                                   (one check per proxy) and shows the protocols that passed
  --region CODE                    region to check from (server default: us1; see \`proxycheck regions\`)
  --timeout MS                     per-proxy budget, ${TIMEOUT_MIN}..${TIMEOUT_MAX} (server default: 2000)
  --samples N                      probe each proxy N times on fresh connections, ${SAMPLES_MIN}..${SAMPLES_MAX}
                                   (one check per sample); shows exits and rotating proxies
  --no-https                       skip the https check (tunnel + TLS to the judge) of working
                                   proxies: no https column, nothing caught intercepting TLS
  --custom-url URL[,codes][,text]  also try working proxies against URL (repeatable);
                                   codes like 200|204 (default 200), text must appear in the body
  --case-sensitive                 match custom-URL text case-sensitively
  --out FILE|-                     save the full result (- = standard output)
  --format json|csv|txt            format of --out (default: from its extension, else json);
                                   txt = working proxies, one per line, as submitted
  --only-working                   keep only working proxies in --out
  --simple                         only the working proxies, one per line as submitted, on standard
                                   output (or in --out); the summary goes to standard error
  --scheme                         with --simple (or txt): each line with its protocol,
                                   socks5://host:port, http://user:pass@host:port
  --job-id ID                      progress channel id (default: random)
  --async                          submit and return at once: prints the job id (see \`proxycheck wait\`)

  a list of more than ${fmtInt(ASYNC_THRESHOLD)} checks (entries x --samples) is submitted asynchronously
  and followed: the job runs on the server even if this connection drops (behind a proxy
  that cuts long requests), and after Ctrl-C (\`proxycheck wait <jobId>\` follows it again)`,
  status: `usage: proxycheck status <jobId>

  the job's state (running, completed, failed, cancelled), checked / total, working;
  a completed job's summary and result links`,
  wait: `usage: proxycheck wait <jobId> [--out FILE|-] [--format json|csv|txt] [--only-working] [--scheme]

  follows the job with a live bar (the WebSocket; polling when it drops) until it ends,
  then prints the summary and the links, and saves the result with --out, as check does.
  exit 0 when it completed, 6 when it failed or was cancelled`,
  cancel: `usage: proxycheck cancel <jobId>

  cancels the running job; the checks not performed are refunded (exit 5 when it has already ended)`,
  me: `usage: proxycheck me [--links]

  --links   print the signed download link of each recent check`,
  pool: POOL_USAGE,
  webhook: WEBHOOK_USAGE,
  regions: 'usage: proxycheck regions',
  health: 'usage: proxycheck health',
  login: LOGIN_USAGE,
  'set-key': LOGIN_USAGE,
  help: 'usage: proxycheck help [command]',
};

function intIn(name: string, raw: string, min: number, max: number, unit = ' of milliseconds'): number {
  if (!/^[0-9]+$/.test(raw)) throw usageError(`--${name} must be a whole number${unit}, ${min}..${max}; got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw usageError(`--${name} must be ${min}..${max}; got ${n}`);
  return n;
}

const CODES = /^[0-9]{3}(?:[|+][0-9]{3})*$/;

/** One `--custom-url URL[,codes][,text]` value. */
export function parseCustomUrl(spec: string, caseSensitive = false): CustomUrlSpec {
  const comma = spec.indexOf(',');
  const url = (comma < 0 ? spec : spec.slice(0, comma)).trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--custom-url: "${url}" is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`--custom-url: only http and https URLs can be tried, not ${parsed.protocol}`);
  }
  const out: CustomUrlSpec = { url };
  if (comma >= 0) {
    const rest = spec.slice(comma + 1);
    const next = rest.indexOf(',');
    const first = next < 0 ? rest : rest.slice(0, next);
    let text = rest;
    if (first.trim() === '' && next >= 0) {
      text = rest.slice(next + 1);
    } else if (CODES.test(first.trim())) {
      const codes = first.trim().split(/[|+]/).map(Number);
      const bad = codes.find((c) => c < 100 || c > 599);
      if (bad !== undefined) throw usageError(`--custom-url: ${bad} is not an HTTP status code (100..599)`);
      out.requiredStatusCodes = codes;
      text = next < 0 ? '' : rest.slice(next + 1);
    }
    if (text !== '') out.requiredText = text;
  }
  if (caseSensitive && out.requiredText !== undefined) out.caseSensitive = true;
  return out;
}

/** --format, else from the extension of --out, else json. */
export function outputFormat(format: string | undefined, out: string | undefined): OutputFormat {
  if (format !== undefined) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
      throw usageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}; got "${format}"`);
    }
    if (out === undefined) throw usageError('--format needs --out FILE (use --out - for standard output)');
    return format as OutputFormat;
  }
  const ext = out?.toLowerCase().match(/\.([a-z]+)$/)?.[1];
  return ext === 'csv' || ext === 'txt' ? ext : 'json';
}

const OPTIONS = {
  key: { type: 'string' },
  url: { type: 'string' },
  json: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  type: { type: 'string' },
  region: { type: 'string' },
  timeout: { type: 'string' },
  samples: { type: 'string' },
  'custom-url': { type: 'string', multiple: true },
  'case-sensitive': { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  format: { type: 'string' },
  'only-working': { type: 'boolean' },
  simple: { type: 'boolean' },
  scheme: { type: 'boolean' },
  'job-id': { type: 'string' },
  async: { type: 'boolean' },
  links: { type: 'boolean' },
  // pool (pool-args.ts POOL_OPTIONS says which action takes which; type, region, timeout, format and no-https are check's too)
  interval: { type: 'string' },
  'no-https': { type: 'boolean' },
  country: { type: 'string' },
  anonymity: { type: 'string' },
  limit: { type: 'string' },
  session: { type: 'string' },
  target: { type: 'string', multiple: true },
  // webhook add (webhook-args.ts)
  events: { type: 'string' },
  pools: { type: 'string' },
} as const;

const CHECK_ONLY = ['type', 'region', 'timeout', 'samples', 'no-https', 'custom-url', 'case-sensitive', 'out', 'format', 'only-working', 'simple', 'scheme', 'job-id', 'async'] as const;
/** The options of CHECK_ONLY that `wait` takes too (where the result goes). */
const RESULT_OPTIONS: readonly string[] = ['out', 'format', 'only-working', 'scheme'];

/** --scheme applies to the txt form only. */
function schemeFor(scheme: boolean | undefined, format: OutputFormat): boolean {
  if (scheme && format !== 'txt') throw usageError(`--scheme writes the protocol into text lines: use it with --simple or --format txt, not ${format}`);
  return scheme ?? false;
}

export function parseCommandLine(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // node's messages are clear ("Unknown option '--x'"); drop its hint about "--" for positionals
    throw usageError(errorText(err).replace(/\. To specify a positional argument.*$/s, ''));
  }
  const v = parsed.values;
  const global: GlobalOptions = { json: v.json ?? false };
  if (v.key !== undefined) global.key = v.key;
  if (v.url !== undefined) global.url = v.url;
  if (v['no-color']) global.color = false;
  if (v.key === '') throw usageError('--key is empty');

  const [name, ...rest] = parsed.positionals;
  if (v.version) return { global, command: { name: 'version' } };
  if (name === undefined) {
    if (v.help) return { global, command: { name: 'help' } };
    throw usageError('no command given');
  }
  if (!(COMMANDS as readonly string[]).includes(name)) throw usageError(`unknown command "${name}"`);
  const cmd = (name === 'set-key' ? 'login' : name) as Exclude<CommandName, 'set-key'>;
  if (v.help) return { global, command: { name: 'help', topic: cmd } };

  const webhookOnly = WEBHOOK_OPTIONS.find((o) => v[o] !== undefined);
  if (cmd === 'webhook') {
    const stray = [...CHECK_ONLY, ...Object.keys(POOL_OPTIONS), 'links'].find((o) => v[o as keyof typeof v] !== undefined);
    if (stray !== undefined) throw usageError(`--${stray} is not an option of "webhook"`);
    return { global, command: parseWebhookArgs(rest, v) };
  }
  if (webhookOnly !== undefined) throw usageError(`--${webhookOnly} is an option of "webhook add", not of "${cmd}"`);
  if (cmd === 'pool') {
    const stray = CHECK_ONLY.find((o) => v[o] !== undefined && !(o in POOL_OPTIONS));
    if (stray !== undefined) throw usageError(`--${stray} is an option of "check", not of "pool"`);
  } else {
    if (cmd !== 'check') {
      const stray = CHECK_ONLY.find((o) => v[o] !== undefined && !(cmd === 'wait' && RESULT_OPTIONS.includes(o)));
      if (stray !== undefined) throw usageError(`--${stray} is an option of ${stray in POOL_OPTIONS ? '"check" and "pool"' : '"check"'}, not of "${cmd}"`);
    }
    const poolOnly = Object.keys(POOL_OPTIONS).find((o) => v[o as keyof typeof v] !== undefined && !(CHECK_ONLY as readonly string[]).includes(o));
    if (poolOnly !== undefined) throw usageError(`--${poolOnly} is an option of "pool", not of "${cmd}"`);
  }
  if (cmd !== 'me' && v.links !== undefined) throw usageError(`--links is an option of "me", not of "${cmd}"`);

  if (cmd === 'help') {
    const topic = rest[0];
    if (topic !== undefined && !(COMMANDS as readonly string[]).includes(topic)) throw usageError(`no help for "${topic}"`);
    return { global, command: topic === undefined ? { name: 'help' } : { name: 'help', topic: topic as CommandName } };
  }
  if (cmd === 'pool') return { global, command: parsePoolArgs(rest, v) };
  if (cmd === 'status' || cmd === 'wait' || cmd === 'cancel') {
    if (rest.length !== 1) throw usageError(`${cmd} needs one job id (got ${rest.length})`);
    const jobId = rest[0]!;
    if (!isJobId(jobId)) throw usageError(`the job id must be ${JOB_ID_RULE}; got "${jobId}"`);
    if (cmd !== 'wait') return { global, command: { name: cmd, jobId } };
    const format = outputFormat(v.format, v.out);
    const wait: WaitCommand = { name: 'wait', jobId, format, onlyWorking: v['only-working'] ?? false, scheme: schemeFor(v.scheme, format) };
    if (v.out !== undefined) {
      if (v.out === '') throw usageError('--out is empty');
      wait.out = v.out;
    }
    if (global.json && wait.out === '-') throw usageError('--json prints the check response on standard output; use --out FILE, not --out -');
    return { global, command: wait };
  }
  if (cmd === 'login') {
    if (rest.length > 1) throw usageError(`"${name}" takes one key (got ${rest.length} arguments)`);
    const key = rest[0];
    if (key === undefined) return { global, command: { name: 'login' } };
    if (key.trim() === '') throw usageError('the key is empty');
    if (v.key !== undefined && v.key !== key) throw usageError(`two different keys given (--key and the argument of "${name}")`);
    return { global, command: { name: 'login', key: key.trim() } };
  }
  if (cmd !== 'check') {
    if (rest.length > 0) throw usageError(`"${cmd}" takes no arguments (got "${rest[0]}")`);
    if (cmd === 'me') return { global, command: { name: 'me', links: v.links ?? false } };
    return { global, command: { name: cmd } };
  }

  if (rest.length === 0) throw usageError('check needs a file of proxies, - for standard input, or proxy addresses');
  if (rest.filter((r) => r === '-').length > 1) throw usageError('standard input (-) can be read once');
  const empty = rest.find((r) => r.trim() === '');
  if (empty !== undefined) throw usageError('check got an empty argument');
  const simple = v.simple ?? false;
  if (simple && v.format !== undefined && v.format !== 'txt') {
    throw usageError(`--simple writes the working proxies as text, one per line; --format ${v.format} says otherwise`);
  }
  const format = simple ? 'txt' : outputFormat(v.format, v.out);
  const command: CheckCommand = {
    name: 'check',
    sources: rest,
    customUrls: (v['custom-url'] ?? []).map((s) => parseCustomUrl(s, v['case-sensitive'] ?? false)),
    format,
    onlyWorking: simple || (v['only-working'] ?? false),
    simple,
    scheme: schemeFor(v.scheme, format),
    async: v.async ?? false,
  };
  if (v.type !== undefined) {
    if (!(CHECK_TYPES as readonly string[]).includes(v.type)) throw usageError(`--type must be one of ${CHECK_TYPES.join(', ')}; got "${v.type}"`);
    command.type = v.type as CheckType;
  }
  if (v.region !== undefined) {
    if (v.region.trim() === '') throw usageError('--region is empty');
    command.region = v.region.trim();
  }
  if (v.timeout !== undefined) command.timeout = intIn('timeout', v.timeout, TIMEOUT_MIN, TIMEOUT_MAX);
  if (v.samples !== undefined) command.samples = intIn('samples', v.samples, SAMPLES_MIN, SAMPLES_MAX, '');
  if (v['no-https']) command.https = false;
  if (v.out !== undefined) {
    if (v.out === '') throw usageError('--out is empty');
    command.out = v.out;
  }
  if (v['job-id'] !== undefined) {
    if (!isJobId(v['job-id'])) throw usageError(`--job-id must be ${JOB_ID_RULE}`);
    command.jobId = v['job-id'];
  }
  if (simple && command.out === undefined) command.out = '-';
  if (global.json && command.out === '-') {
    throw usageError(`--json prints the check response on standard output; ${simple ? 'give --simple an --out FILE' : 'use --out FILE, not --out -'}`);
  }
  if (command.async && command.out !== undefined) throw usageError('--async returns before the result exists; save it with `proxycheck wait <jobId> --out FILE`');
  if (v['case-sensitive'] && command.customUrls.length === 0) throw usageError('--case-sensitive applies to --custom-url text; no --custom-url given');
  return { global, command };
}
