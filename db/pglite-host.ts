/**
 * The embedded database's thread: the entry of the worker thread that owns
 * the PGlite instance (db/pglite-thread.ts starts it; the messages are
 * db/pglite-protocol.ts). PGlite runs PostgreSQL in WASM on the thread that
 * calls it, so here a pool's flush or a long query blocks this thread, not
 * the main thread that answers HTTP (issue 29). It is in db/ (not workers/):
 * it is the database layer's own thread.
 *
 * The host answers requests in the order they come, each as PGlite answers
 * it: PGlite runs one statement at a time and holds every other statement
 * while a transaction is open, so requests wait in PGlite's own queue,
 * first come first served, exactly as they did on the main thread.
 *
 * A transaction (request `begin`) is PGlite's transaction() whose callback
 * waits for the request `end`: its queries name it by id, and `end` commits
 * (or rolls back, when the main thread's callback threw) and answers when
 * PGlite has.
 *
 * ## States
 *
 *   (loaded) ──open──> open ──close──> closed (every later request: an error)
 *
 * A request before `open` finished or after `close` is answered with an
 * error, never left without a reply.
 */
import { parentPort } from 'node:worker_threads';
import type { PGlite, Results, Transaction } from '@electric-sql/pglite';
import { collectInitdbGarbage, newPglite } from './pglite-instance';
import { toWireError } from '../src/errors';
import { identityParsers, type DumpValue, type Reply, type Request } from './pglite-protocol';

interface OpenTx {
  tx: Transaction;
  /** Settles PGlite's transaction callback: resolve = COMMIT, reject = ROLLBACK. */
  end(commit: boolean): void;
  /** PGlite's transaction() itself: settles after COMMIT or ROLLBACK. */
  settled: Promise<unknown>;
}

/** What the callback rejects with to make PGlite roll back; never reaches the main thread. */
const ROLLBACK = Symbol('rollback');

let pg: PGlite | null = null;
let closed = false;
const txs = new Map<number, OpenTx>();
let nextTx = 1;
/** The parsers objects by their OID list (drizzle passes one of two configs: keep them). */
const parserCache = new Map<string, Record<number, (value: string) => string>>();

function ready(): PGlite {
  if (closed) throw new Error('the embedded database is closed');
  if (pg === null) throw new Error('the embedded database is not open');
  return pg;
}

function target(tx: number): PGlite | Transaction {
  if (tx === 0) return ready();
  const t = txs.get(tx);
  if (t === undefined) throw new Error(`no open transaction ${tx}`);
  return t.tx;
}

function parsersFor(oids: number[]): Record<number, (value: string) => string> {
  const key = oids.join(',');
  let p = parserCache.get(key);
  if (p === undefined) parserCache.set(key, (p = identityParsers(oids)));
  return p;
}

async function open(spec: Extract<Request, { op: 'open' }>['spec']): Promise<void> {
  if (pg !== null || closed) throw new Error('the embedded database was opened already');
  const client = newPglite(spec.dataDir, spec.template === null ? undefined : new Blob([spec.template]), spec.modules);
  try {
    await client.waitReady;
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  pg = client;
  if (spec.collectGarbage) await collectInitdbGarbage();
}

async function begin(): Promise<number> {
  const client = ready();
  const id = nextTx++;
  let began!: () => void;
  const started = new Promise<void>((resolve) => (began = resolve));
  let end!: (commit: boolean) => void;
  const settled = client.transaction(
    (tx) =>
      new Promise<void>((resolve, reject) => {
        end = (commit) => (commit ? resolve() : reject(ROLLBACK));
        txs.set(id, { tx, end, settled });
        began();
      }),
  );
  // BEGIN itself may fail (then the callback never runs): answer that failure
  await Promise.race([started, settled]);
  return id;
}

async function finish(id: number, commit: boolean): Promise<void> {
  const t = txs.get(id);
  if (t === undefined) throw new Error(`no open transaction ${id}`);
  t.end(commit);
  try {
    await t.settled;
  } catch (err) {
    if (err !== ROLLBACK) throw err;
  } finally {
    txs.delete(id);
  }
}

async function close(): Promise<void> {
  if (closed) return;
  closed = true;
  // a transaction the main thread left open (it is closing) is rolled back before PGlite closes
  for (const id of [...txs.keys()]) await finish(id, false).catch(() => undefined);
  if (pg !== null && !pg.closed) await pg.close();
}

async function handle(req: Request): Promise<Results | Results[] | number | DumpValue | undefined> {
  switch (req.op) {
    case 'open':
      await open(req.spec);
      return undefined;
    case 'query':
      return target(req.tx).query(req.sql, req.params, {
        rowMode: req.rowMode,
        parsers: parsersFor(req.identityParsers),
        ...(req.paramTypes !== undefined ? { paramTypes: req.paramTypes } : {}),
      });
    case 'exec':
      return target(req.tx).exec(req.sql);
    case 'begin':
      return begin();
    case 'end':
      await finish(req.tx, req.commit);
      return undefined;
    case 'dump': {
      const file = await ready().dumpDataDir(req.compression);
      return { bytes: await file.arrayBuffer(), type: file.type };
    }
    case 'close':
      await close();
      return undefined;
  }
}

const port = parentPort;
if (port === null) throw new Error('db/pglite-host.ts is a worker thread entry (db/pglite-thread.ts starts it)');

port.on('message', (req: Request) => {
  handle(req).then(
    (value) => {
      const reply: Reply = { id: req.id, ok: true, value };
      if (value !== undefined && typeof value === 'object' && 'bytes' in value) port.postMessage(reply, [value.bytes]);
      else port.postMessage(reply);
    },
    (err: unknown) => port.postMessage({ id: req.id, ok: false, error: toWireError(err) } satisfies Reply),
  );
});
