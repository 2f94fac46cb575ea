/**
 * `proxycheck pool <action> ...`: the pool commands' arguments and options
 * (args.ts parses the command line and hands the `pool` command's words and
 * option values here). Pure: a typed PoolCommand, or a usage CliError.
 *
 *   pool create <name> <input>... [--type --region --interval S --timeout MS --no-https
 *                                  --target NAME=URL[,text=TEXT][,status=200|204]...]
 *   pool list
 *   pool show <id>
 *   pool add <id> <input>...        pool remove <id> <input>...
 *   pool pause <id>                 pool resume <id>
 *   pool delete <id>
 *   pool working <id> [--country CC --anonymity A --type T --target NAME --format txt|csv|json --limit N --scheme]
 *   pool watch <id>                 pool gateway <id> [--country CC --type T --target NAME --session TOKEN]
 *
 * Inputs are check's: files (one proxy per line), - for standard input
 * (once), or addresses. Each action takes only its own options (another's
 * is a usage error naming the action that has it).
 */
import { CHECK_TYPES, PROXY_TYPES, type CheckType, type ProxyType } from '../proxy/types';
import { isPoolId } from '../pools/pool-id';
import { isTargetName, TARGET_NAME_MAX } from '../pools/targets';
import { ANONYMITIES, PROXY_FORMATS, type ProxyFormat } from '../pools/query';
import type { Anonymity } from '../probe/types';
import { usageError } from './exit-codes';

const SESSION = /^[A-Za-z0-9]{1,32}$/;

export const POOL_ACTIONS = Object.freeze(['create', 'list', 'show', 'add', 'remove', 'pause', 'resume', 'delete', 'working', 'watch', 'gateway'] as const);
export type PoolAction = (typeof POOL_ACTIONS)[number];

/** The options only pool commands take, and which action takes each. */
export const POOL_OPTIONS: Readonly<Record<string, readonly PoolAction[]>> = Object.freeze({
  type: ['create', 'working', 'gateway'],
  region: ['create'],
  interval: ['create'],
  timeout: ['create'],
  'no-https': ['create'],
  country: ['working', 'gateway'],
  session: ['gateway'],
  anonymity: ['working'],
  format: ['working'],
  limit: ['working'],
  scheme: ['working'],
  target: ['create', 'working', 'gateway'],
});

/** One `--target NAME=URL[,text=TEXT][,status=CODES]` of pool create: a pool target (the API's customUrls entry). */
export interface TargetSpec {
  name: string;
  url: string;
  requiredText?: string;
  requiredStatusCodes?: number[];
}

const TARGET_CODES = /^[0-9]{3}(?:[|+][0-9]{3})*$/;

function targetName(raw: string): string {
  if (!isTargetName(raw)) throw usageError(`--target: the name must be 1 to ${TARGET_NAME_MAX} of a-z, 0-9 and -; got "${raw}"`);
  return raw;
}

/**
 * `NAME=URL[,text=TEXT][,status=CODES]`: the URL runs to the first `,text=`
 * or `,status=`; the text to `,status=` or the end (it may hold commas);
 * CODES are status codes joined by | or +.
 */
export function parseTargetSpec(spec: string): TargetSpec {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw usageError(`--target must be NAME=URL[,text=TEXT][,status=CODES]; got "${spec}"`);
  const out: TargetSpec = { name: targetName(spec.slice(0, eq)), url: '' };
  let rest = spec.slice(eq + 1);
  const statusAt = rest.indexOf(',status=');
  if (statusAt >= 0) {
    const codes = rest.slice(statusAt + 8);
    rest = rest.slice(0, statusAt);
    if (!TARGET_CODES.test(codes)) throw usageError(`--target ${out.name}: status= must be HTTP status codes joined by | (like 200|204); got "${codes}"`);
    out.requiredStatusCodes = codes.split(/[|+]/).map(Number);
    const bad = out.requiredStatusCodes.find((c) => c < 100 || c > 599);
    if (bad !== undefined) throw usageError(`--target ${out.name}: ${bad} is not an HTTP status code (100..599)`);
  }
  const textAt = rest.indexOf(',text=');
  if (textAt >= 0) {
    out.requiredText = rest.slice(textAt + 6);
    rest = rest.slice(0, textAt);
    if (out.requiredText === '') throw usageError(`--target ${out.name}: text= is empty`);
  }
  let u: URL;
  try {
    u = new URL(rest);
  } catch {
    throw usageError(`--target ${out.name}: "${rest}" is not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`--target ${out.name}: only http and https URLs, not ${u.protocol}`);
  out.url = rest;
  return out;
}

function oneTarget(v: readonly string[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (v.length > 1) throw usageError('--target is given once here (one target name)');
  return targetName(v[0]!);
}

/** The most proxies one `pool working` prints (all of an account's pools hold at most this many by default). */
export const WORKING_LIMIT_MAX = 1_000_000_000;

export type PoolCommand =
  | { name: 'pool'; action: 'create'; poolName: string; sources: string[]; type?: CheckType; region?: string; intervalS?: number; timeoutMs?: number; https?: false; targets?: TargetSpec[] }
  | { name: 'pool'; action: 'list' }
  | { name: 'pool'; action: 'show' | 'pause' | 'resume' | 'delete' | 'watch'; id: string }
  | { name: 'pool'; action: 'gateway'; id: string; country?: string; type?: ProxyType; target?: string; session?: string }
  | { name: 'pool'; action: 'add' | 'remove'; id: string; sources: string[] }
  | { name: 'pool'; action: 'working'; id: string; country?: string; anonymity?: Anonymity; type?: ProxyType; target?: string; format: ProxyFormat; limit?: number; scheme?: true };

/** Option values as node's parseArgs gives them (only the pool ones are read). */
export type PoolOptionValues = Partial<Record<'type' | 'region' | 'interval' | 'timeout' | 'country' | 'anonymity' | 'format' | 'limit' | 'session', string>> & {
  'no-https'?: boolean;
  scheme?: boolean;
  target?: string[];
};

function intIn(name: string, raw: string, min: number, max: number): number {
  if (!/^[0-9]+$/.test(raw)) throw usageError(`--${name} must be a whole number, ${min}..${max}; got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw usageError(`--${name} must be ${min}..${max}; got ${n}`);
  return n;
}

function poolId(action: PoolAction, raw: string | undefined): string {
  if (raw === undefined) throw usageError(`pool ${action} needs the pool's id (\`proxycheck pool list\` shows them)`);
  if (!isPoolId(raw)) throw usageError(`"${raw}" is not a pool id (10 to 32 lower-case letters and digits)`);
  return raw;
}

function inputs(action: PoolAction, words: readonly string[]): string[] {
  if (words.length === 0) throw usageError(`pool ${action} needs a file of proxies, - for standard input, or proxy addresses`);
  if (words.filter((w) => w === '-').length > 1) throw usageError('standard input (-) can be read once');
  if (words.some((w) => w.trim() === '')) throw usageError(`pool ${action} got an empty argument`);
  return [...words];
}

function country(raw: string): string {
  if (!/^[A-Za-z]{2}$/.test(raw)) throw usageError(`--country must be a two-letter country code (ISO 3166), like DE; got "${raw}"`);
  return raw.toUpperCase();
}

function proxyType(raw: string): ProxyType {
  if (!(PROXY_TYPES as readonly string[]).includes(raw)) throw usageError(`--type must be one of ${PROXY_TYPES.join(', ')}; got "${raw}"`);
  return raw as ProxyType;
}

/** `words`: what follows `pool` on the command line (positionals); `v`: the option values. */
export function parsePoolArgs(words: readonly string[], v: PoolOptionValues): PoolCommand {
  const [action, ...rest] = words;
  if (action === undefined) throw usageError(`pool needs an action: ${POOL_ACTIONS.join(', ')}`);
  if (!(POOL_ACTIONS as readonly string[]).includes(action)) throw usageError(`unknown pool action "${action}" (one of ${POOL_ACTIONS.join(', ')})`);
  const a = action as PoolAction;
  for (const [option, actions] of Object.entries(POOL_OPTIONS)) {
    if (v[option as keyof PoolOptionValues] !== undefined && !actions.includes(a)) {
      throw usageError(`--${option} is an option of ${actions.map((x) => `"pool ${x}"`).join(' and ')}, not of "pool ${a}"`);
    }
  }
  const noMore = (n: number) => {
    if (rest.length > n) throw usageError(`"pool ${a}" takes ${n === 0 ? 'no arguments' : 'the pool id only'} (got "${rest[n]}")`);
  };

  switch (a) {
    case 'create': {
      const [name, ...srcs] = rest;
      if (name === undefined || name.trim() === '') throw usageError('pool create needs a name, then the proxies: pool create <name> <file|-|addresses...>');
      const c: PoolCommand & { action: 'create' } = { name: 'pool', action: 'create', poolName: name, sources: inputs(a, srcs) };
      if (v.type !== undefined) {
        if (!(CHECK_TYPES as readonly string[]).includes(v.type)) throw usageError(`--type must be one of ${CHECK_TYPES.join(', ')}; got "${v.type}"`);
        c.type = v.type as CheckType;
      }
      if (v.region !== undefined) {
        if (v.region.trim() === '') throw usageError('--region is empty');
        c.region = v.region.trim();
      }
      if (v.interval !== undefined) c.intervalS = intIn('interval', v.interval, 1, 86_400);
      if (v.timeout !== undefined) c.timeoutMs = intIn('timeout', v.timeout, 1000, 20_000);
      if (v['no-https']) c.https = false;
      if (v.target !== undefined) {
        c.targets = v.target.map(parseTargetSpec);
        const names = c.targets.map((t) => t.name);
        const twice = names.find((n, i) => names.indexOf(n) !== i);
        if (twice !== undefined) throw usageError(`--target ${twice} is given twice`);
      }
      return c;
    }
    case 'list':
      noMore(0);
      return { name: 'pool', action: 'list' };
    case 'show':
    case 'pause':
    case 'resume':
    case 'delete':
    case 'watch':
      noMore(1);
      return { name: 'pool', action: a, id: poolId(a, rest[0]) };
    case 'add':
    case 'remove':
      return { name: 'pool', action: a, id: poolId(a, rest[0]), sources: inputs(a, rest.slice(1)) };
    case 'gateway': {
      noMore(1);
      const c: PoolCommand & { action: 'gateway' } = { name: 'pool', action: 'gateway', id: poolId(a, rest[0]) };
      if (v.country !== undefined) c.country = country(v.country);
      if (v.type !== undefined) c.type = proxyType(v.type);
      const gt = oneTarget(v.target);
      if (gt !== undefined) c.target = gt;
      if (v.session !== undefined) {
        if (!SESSION.test(v.session)) throw usageError(`--session must be 1 to 32 letters or digits; got "${v.session}"`);
        c.session = v.session;
      }
      return c;
    }
    case 'working': {
      noMore(1);
      const c: PoolCommand & { action: 'working' } = { name: 'pool', action: 'working', id: poolId(a, rest[0]), format: 'txt' };
      if (v.country !== undefined) c.country = country(v.country);
      if (v.anonymity !== undefined) {
        if (!(ANONYMITIES as readonly string[]).includes(v.anonymity)) throw usageError(`--anonymity must be one of ${ANONYMITIES.join(', ')}; got "${v.anonymity}"`);
        c.anonymity = v.anonymity as Anonymity;
      }
      if (v.type !== undefined) c.type = proxyType(v.type);
      const wt = oneTarget(v.target);
      if (wt !== undefined) c.target = wt;
      if (v.format !== undefined) {
        if (!(PROXY_FORMATS as readonly string[]).includes(v.format)) throw usageError(`--format must be one of ${PROXY_FORMATS.join(', ')}; got "${v.format}"`);
        c.format = v.format as ProxyFormat;
      }
      if (v.limit !== undefined) c.limit = intIn('limit', v.limit, 1, WORKING_LIMIT_MAX);
      if (v.scheme) {
        if (c.format !== 'txt') throw usageError(`--scheme writes the protocol into text lines (txt), not ${c.format}`);
        c.scheme = true;
      }
      return c;
    }
  }
}

export const POOL_USAGE = `usage: proxycheck pool <action> [arguments] [options]

  A pool is a named set of proxies the service keeps checked on a schedule
  (each round charged one check per proxy checked).

  pool create <name> <input>...   a new pool from files (one proxy per line), - (standard input)
                                  or addresses; prints its id
      --type http|socks4|socks5|auto   how its proxies are checked (default http)
      --region CODE                    region to check from (default us1)
      --interval S                     a working proxy is checked again within S seconds
                                       (default 600; the server's minimum is POOL_MIN_INTERVAL_S, 60)
      --timeout MS                     per-check budget, 1000..20000 (default 5000)
      --no-https                       skip the https check of working proxies
      --target NAME=URL[,text=TEXT][,status=200|204]
                                       a site the working proxies are tried against too
                                       (again: more sites); TEXT must be in its body
  pool list                       the account's pools: state, counts, interval
  pool show <id>                  one pool
  pool add <id> <input>...        add proxies (due at once); pool remove <id> <input>... removes them
  pool pause <id>                 stop checking it; pool resume <id> starts again
  pool delete <id>                delete it with its proxies and their history
  pool working <id>               the proxies working now, one address per line as given
                                  (credentials kept): what a scraper's cron job fetches
      --country CC                     only exits in this country (e.g. DE)
      --anonymity elite|anonymous|transparent
      --type http|socks4|socks5        only proxies that passed as this protocol
      --target NAME                    only proxies that passed the pool's target NAME
      --format txt|csv|json            default txt (csv: every field; json: the API's objects)
      --limit N                        at most N proxies (default: all)
      --scheme                         each line with its protocol: socks5://host:port,
                                       http://user:pass@host:port
  pool watch <id>                 follow the pool's events live, one line each (up, down, round,
                                  paused, resumed) until Ctrl-C or the pool is deleted
  pool gateway <id>               the proxy URLs that rotate over the pool's working proxies
                                  (http:// and socks5://, your key as the password)
      --country CC                     only exits in this country
      --type http|socks4|socks5        only upstreams that speak this protocol
      --target NAME                    only upstreams that passed the pool's target NAME
      --session TOKEN                  the same upstream for TOKEN while it works (at most 30 min)

  --json prints the API's JSON (for pool working: the proxies as JSON, like --format json;
  for pool watch: one event per line as the server sent it).`;
