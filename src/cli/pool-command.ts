/**
 * `proxycheck pool ...` (pool-args.ts parses it): each action is one or a
 * few calls of the pool routes (docs/API.md "Pools") and a rendering
 * (pool-tables.ts), or with --json the API's JSON on standard output.
 * Exit codes are the other commands' (exit-codes.ts): a pool of another
 * account, or none, is the server's 404, exit 5.
 *
 * `pool watch` follows `/ws?pool=`: one line per event on standard output
 * (pool-events-render.ts; with --json the event's JSON, one per line) until
 * Ctrl-C or the pool is deleted (exit 0). The pool is read first (a 404 or
 * 401 ends it with that exit code); a socket that closes otherwise (a
 * restart, a slow reader's 1013) or does not open is opened again every
 * WATCH_REOPEN_MS, after the pool is read again (a 4xx then ends it; a
 * network failure or 5xx, a service restarting, is waited out).
 *
 * `pool gateway` prints the gateway's proxy URLs for the pool (the key as
 * password; the gateway's address from /health `gateway`, its host the
 * API's when the gateway listens on every address): HTTP, then SOCKS5;
 * --json `{http, socks5}`. No gateway on the service: exit 5.
 *
 * `pool working` is what a scraper's cron job calls: the proxies working
 * now on standard output and nothing else (txt: one address per line as it
 * was given, credentials kept; --scheme: `scheme=true`, each line
 * `<protocol>://[user:pass@]host:port`; csv: one header row; json, also
 * with --json: `{"proxies": [...]}`), every page followed through the
 * cursor up to --limit (pages of at most 10 000).
 */
import { ENTRY_ERROR_CODES } from '../error-codes';
import { gatewayUrls } from '../gateway/urls';
import { MAX_PAGE_LIMIT } from '../pools/limits';
import type { ApiClient, PoolEventBody, PoolProxyObject } from './api-client';
import type { GlobalOptions } from './args';
import { CliError, EXIT } from './exit-codes';
import { pause } from './job-follow';
import { FOLD_MS, RoundFold } from './pool-events-render';
import { readInputs, type CliIo } from './io';
import type { PoolCommand } from './pool-args';
import { renderAdded, renderCreated, renderPool, renderPools, withWarnings } from './pool-tables';

const json = (io: CliIo, v: unknown) => io.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

export async function runPool(command: PoolCommand, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const signal = io.signal;
  switch (command.action) {
    case 'create': {
      const { lines } = await readInputs(command.sources, io);
      const body: Record<string, unknown> = { name: command.poolName, proxies: lines };
      if (command.type !== undefined) body.type = command.type;
      if (command.region !== undefined) body.region = command.region;
      if (command.intervalS !== undefined) body.interval_s = command.intervalS;
      if (command.timeoutMs !== undefined) body.timeout = command.timeoutMs;
      if (command.https === false) body.https = false;
      if (command.targets !== undefined) body.customUrls = command.targets;
      const p = await client.createPool(body, signal);
      if (g.json) json(io, p);
      else io.stdout.write(`${withWarnings(renderCreated(p), p)}\n`);
      return EXIT.OK;
    }
    case 'list': {
      const pools = await client.pools(signal);
      if (g.json) json(io, { pools });
      else io.stdout.write(`${renderPools(pools, io.now())}\n`);
      return EXIT.OK;
    }
    case 'show': {
      const p = await client.pool(command.id, signal);
      if (g.json) json(io, p);
      else io.stdout.write(`${renderPool(p, io.now())}\n`);
      return EXIT.OK;
    }
    case 'add':
    case 'remove': {
      const { lines } = await readInputs(command.sources, io);
      const p = await client.updatePool(command.id, { [command.action]: lines }, signal);
      if (g.json) json(io, p);
      else io.stdout.write(`${withWarnings(renderAdded(p, command.action), p)}\n`);
      return EXIT.OK;
    }
    case 'pause':
    case 'resume': {
      const p = await client.updatePool(command.id, { state: command.action === 'pause' ? 'paused' : 'active' }, signal);
      if (g.json) json(io, p);
      else io.stdout.write(`${withWarnings(command.action === 'pause' ? `Paused pool ${p.id}: nothing is checked or charged until \`proxycheck pool resume ${p.id}\`.` : `Resumed pool ${p.id}.`, p)}\n`);
      return EXIT.OK;
    }
    case 'delete': {
      await client.deletePool(command.id, signal);
      if (g.json) json(io, { deleted: command.id });
      else io.stdout.write(`Deleted pool ${command.id} with its proxies and their history.\n`);
      return EXIT.OK;
    }
    case 'working':
      return working(command, g, client, io);
    case 'watch':
      return watch(command.id, g, client, io);
    case 'gateway':
      return gateway(command, g, client, io);
  }
}

/** Between two attempts to open the events socket again. */
export const WATCH_REOPEN_MS = 2_000;

async function watch(id: string, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const pool = await client.pool(id, io.signal);
  if (!g.json) io.stderr.write(`Watching pool ${pool.id} (${pool.name}): ${pool.counts.working} of ${pool.counts.total} working. Ctrl-C to stop.\n`);
  // one-proxy rounds folded into a line every FOLD_MS (--json: every event as it came)
  const fold = new RoundFold();
  const print = (lines: readonly string[]) => {
    for (const l of lines) io.stdout.write(`${l}\n`);
  };
  const flusher = g.json ? undefined : setInterval(() => print([fold.flush()].filter((l) => l !== null)), FOLD_MS);
  try {
    return await watchEvents(id, g, client, io, (e) => (g.json ? print([JSON.stringify(e)]) : print(fold.add(e))));
  } finally {
    clearInterval(flusher);
    const held = fold.flush();
    if (held !== null) print([held]);
  }
}

async function watchEvents(id: string, g: GlobalOptions, client: ApiClient, io: CliIo, onEvent: (e: PoolEventBody) => void): Promise<number> {
  for (;;) {
    const channel = await client.poolEvents(id, onEvent);
    if (channel === null) {
      await pause(WATCH_REOPEN_MS, io.signal);
      await stillThere(id, client, io);
      continue;
    }
    try {
      const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
        const onAbort = () => reject(io.signal.reason);
        if (io.signal.aborted) return onAbort();
        io.signal.addEventListener('abort', onAbort, { once: true });
        void channel.closed.then((c) => {
          io.signal.removeEventListener('abort', onAbort);
          resolve(c);
        });
      });
      if (closed.reason === 'pool deleted') {
        if (!g.json) io.stderr.write(`Pool ${id} was deleted.\n`);
        return EXIT.OK;
      }
    } finally {
      channel.close();
    }
    await pause(WATCH_REOPEN_MS, io.signal);
    await stillThere(id, client, io);
  }
}

/** Throws when the pool is gone or the key refused (their exit codes); a network failure or a 5xx (a restart) is waited out. */
async function stillThere(id: string, client: ApiClient, io: CliIo): Promise<void> {
  try {
    await client.pool(id, io.signal);
  } catch (err) {
    if (io.signal.aborted || !(err instanceof CliError) || err.exitCode !== EXIT.NETWORK) throw err;
  }
}

async function gateway(c: Extract<PoolCommand, { action: 'gateway' }>, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const key = client.apiKey();
  await client.pool(c.id, io.signal); // another account's or no pool: 404, exit 5
  const at = (await client.health(io.signal)).body.gateway;
  if (at === undefined) {
    throw new CliError(EXIT.CLIENT, ENTRY_ERROR_CODES.CLI_NO_GATEWAY, `${client.url} runs no gateway (its operator turns it on with GATEWAY_PORT).`);
  }
  const host = at.host ?? new URL(client.url).hostname.replace(/^\[|\]$/g, '');
  const urls = gatewayUrls(host, at.port, { poolId: c.id, country: c.country ?? null, type: c.type ?? null, target: c.target ?? null, session: c.session ?? null, rotate: 'round_robin' }, key);
  if (g.json) json(io, urls);
  else io.stdout.write(`${urls.http}\n${urls.socks5}\n`);
  return EXIT.OK;
}

async function working(c: Extract<PoolCommand, { action: 'working' }>, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const format = g.json ? 'json' : c.format;
  const base = new URLSearchParams({ status: 'working', format });
  if (c.scheme === true && format === 'txt') base.set('scheme', 'true');
  if (c.country !== undefined) base.set('country', c.country);
  if (c.anonymity !== undefined) base.set('anonymity', c.anonymity);
  if (c.type !== undefined) base.set('type', c.type);
  if (c.target !== undefined) base.set('target', c.target);
  let left = c.limit ?? Number.POSITIVE_INFINITY;
  let cursor: string | null = null;
  let first = true;
  const collected: PoolProxyObject[] = [];
  do {
    const q = new URLSearchParams(base);
    const size = Math.min(left, MAX_PAGE_LIMIT);
    q.set('limit', String(size));
    if (cursor !== null) q.set('cursor', cursor);
    const page = await client.poolProxies(c.id, q, io.signal);
    if (format === 'json') collected.push(...(JSON.parse(page.text) as { proxies: PoolProxyObject[] }).proxies);
    // csv: the header row once, from the first page
    else io.stdout.write(format === 'csv' && !first ? page.text.slice(page.text.indexOf('\r\n') + 2) : page.text);
    first = false;
    cursor = page.nextCursor;
    // a page with a next cursor is a full one
    left -= size;
  } while (cursor !== null && left > 0);
  if (format === 'json') json(io, { proxies: collected });
  return EXIT.OK;
}
