/**
 * `proxycheck pool ...` (pool-args.ts parses it): each action is one or a
 * few calls of the pool routes (docs/API.md "Pools") and a rendering
 * (pool-tables.ts), or with --json the API's JSON on standard output.
 * Exit codes are the other commands' (exit-codes.ts): a pool of another
 * account, or none, is the server's 404, exit 5.
 *
 * `pool working` is what a scraper's cron job calls: the proxies working
 * now on standard output and nothing else (txt: one address per line as it
 * was given, credentials kept; csv: one header row; json, also with --json:
 * `{"proxies": [...]}`), every page followed through the cursor up to
 * --limit (pages of at most 10 000).
 */
import { MAX_PAGE_LIMIT } from '../pools/limits';
import type { ApiClient, PoolProxyObject } from './api-client';
import type { GlobalOptions } from './args';
import { EXIT } from './exit-codes';
import { readInputs, type CliIo } from './io';
import type { PoolCommand } from './pool-args';
import { renderAdded, renderCreated, renderPool, renderPools } from './pool-tables';

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
      const p = await client.createPool(body, signal);
      if (g.json) json(io, p);
      else io.stdout.write(`${renderCreated(p)}\n`);
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
      else io.stdout.write(`${renderAdded(p, command.action)}\n`);
      return EXIT.OK;
    }
    case 'pause':
    case 'resume': {
      const p = await client.updatePool(command.id, { state: command.action === 'pause' ? 'paused' : 'active' }, signal);
      if (g.json) json(io, p);
      else io.stdout.write(command.action === 'pause' ? `Paused pool ${p.id}: nothing is checked or charged until \`proxycheck pool resume ${p.id}\`.\n` : `Resumed pool ${p.id}.\n`);
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
  }
}

async function working(c: Extract<PoolCommand, { action: 'working' }>, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const format = g.json ? 'json' : c.format;
  const base = new URLSearchParams({ status: 'working', format });
  if (c.country !== undefined) base.set('country', c.country);
  if (c.anonymity !== undefined) base.set('anonymity', c.anonymity);
  if (c.type !== undefined) base.set('type', c.type);
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
