/**
 * Tests for src/results/pg-store.ts: the ResultStore contract
 * (test/helpers/result-store-contract.ts) on PGlite always and on
 * PostgreSQL too when TEST_DATABASE_URL / DATABASE_URL is set (a fresh
 * database per file), and what is particular to a cluster-wide store:
 * - a result written by one store is read by another one on another
 *   connection with another staging dir (another API node), also through the
 *   real download route as .json, .csv and .txt;
 * - a document of many chunks streams back byte for byte, one chunk per pull;
 * - two stores sweeping at once delete each result once (age, then the cap);
 *   a sweep that finds another node's sweep lock deletes nothing in the
 *   database but still its own local leftovers;
 * - abort during the upload and a database error during it leave nothing
 *   (rolled back, local file gone); a result swept while it is read ends
 *   the stream with result_read_failed;
 * - crash leftovers in the staging dir (spill files, a finished document
 *   never uploaded) go by orphanCutoffMs, a live writer's never.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database, type Db } from '../../db/client';
import { isServiceError } from '../../src/errors';
import { createApp } from '../../src/http/app';
import { convertResult } from '../../src/results/export';
import { newResultId, signResultLink, type ResultExt } from '../../src/results/links';
import { openPgResultStore } from '../../src/results/pg-store';
import { RESULT_SWEEP_LOCK } from '../../src/results/pg-store-sql';
import type { ProxyRecord } from '../../src/results/record';
import type { ResultStore, StoredResult } from '../../src/results/store';
import { fakeAppDeps } from '../helpers/app-deps';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';
import { resultStoreContract } from '../helpers/result-store-contract';

const root = mkdtempSync(join(tmpdir(), 'result-store-pg-'));
let n = 0;
const stagingDir = () => join(root, `s${n++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Driver {
  name: string;
  /** The file's database on this driver (opened once). */
  db(): Promise<TestDatabase>;
  /** Another connection to it (PostgreSQL: another pool, as another node has; PGlite: the same one). */
  other(): Promise<Db>;
}

function driver(name: string, open: () => Promise<TestDatabase>): Driver {
  let tdb: Promise<TestDatabase> | undefined;
  let second: Promise<Database> | undefined;
  afterAll(async () => {
    if (second !== undefined) await (await second).close();
    if (tdb !== undefined) await (await tdb).cleanup();
  });
  const db = () => (tdb ??= open());
  return {
    name,
    db,
    async other() {
      const d = await db();
      if (d.url === undefined) return d.db;
      second ??= openDatabase({ databaseUrl: d.url, migrate: false });
      return (await second).db;
    },
  };
}

const url = testDatabaseUrl();
const DRIVERS: Driver[] = [driver('PGlite', freshPglite), ...(url !== undefined ? [driver('PostgreSQL', () => freshPostgres(url))] : [])];

const empty = async (db: Db) => {
  await db.execute(sql`TRUNCATE result_files, result_chunks`);
};

const record = (i: number, working: boolean): ProxyRecord => ({
  proxy:
    i % 3 === 0
      ? { host: `198.51.100.${i % 250}`, port: 1000 + i, hasAuth: true, username: 'u=ser', password: 'p,"w"', format: 'url_auth' }
      : { host: `203.0.113.${i % 250}`, port: 2000 + i, hasAuth: false, format: 'standard' },
  status: working ? 'working' : 'failed',
  statusCode: working ? 200 : null,
  responseTime: `${(working ? 50 + ((i * 37) % 900) : 5000).toFixed(2)} ms`,
  anonymity: working ? 'elite' : null,
  origin: working ? `198.51.100.${i % 250}` : null,
  country: working ? 'DE' : null,
  country_name: working ? 'Germany' : null,
  location: working ? 'Frankfurt am Main, Hesse' : null,
  isp: working ? '=cmd|" ISP' : null,
  asn: working ? 64_500 + (i % 10) : null,
  coordinates: working ? { lat: 50.11, lon: 8.68 } : null,
  ...(working ? {} : { error: { code: 'timeout', message: 'no answer within 5000 ms' } }),
});

async function writeDoc(store: ResultStore, records: number, id = newResultId()): Promise<{ id: string; bytes: number }> {
  const w = await store.create(id);
  for (let i = 0; i < records; i++) await w.addProxy(record(i, i % 10 === 0));
  const stats = await w.finish({ summary: { total: records }, metadata: { job: id } });
  return { id, bytes: stats.bytes };
}

const text = (r: StoredResult) => new Response(r.stream()).text();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return isServiceError(err) ? err.code : `not a ServiceError: ${String(err)}`;
  }
}

async function collect(gen: AsyncGenerator<string>): Promise<string> {
  let s = '';
  for await (const piece of gen) s += piece;
  return s;
}

/** A Db whose transactions run `hook(k)` before their k-th statement (1-based). */
function hooked(db: Db, hook: (k: number) => void): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return (fn: (tx: Db) => Promise<unknown>) =>
        target.transaction((tx) => {
          let k = 0;
          const wrapped = new Proxy(tx, {
            get(t, p, r) {
              if (p !== 'execute') return Reflect.get(t, p, r);
              return (q: Parameters<Db['execute']>[0]) => {
                hook(++k);
                return t.execute(q);
              };
            },
          });
          return fn(wrapped as unknown as Db);
        });
    },
  });
}

for (const d of DRIVERS) {
  const stagings = new Map<ResultStore, string>();
  resultStoreContract(`PostgreSQL tables on ${d.name}`, {
    async fresh() {
      const { db } = await d.db();
      await empty(db);
      const dir = stagingDir();
      const store = await openPgResultStore({ db, stagingDir: dir });
      stagings.set(store, dir);
      return store;
    },
    async reopen(store) {
      // a restarted node: a new store (on a new connection) over the same tables and staging dir
      const dir = stagings.get(store)!;
      const other = await openPgResultStore({ db: await d.other(), stagingDir: dir });
      stagings.set(other, dir);
      return other;
    },
    async cleanup() {
      // the database goes with the driver's afterAll, the staging dirs with the root
    },
  });

  describe(`the PostgreSQL result store on ${d.name}`, () => {
    /** Store A and store B: two nodes on one database, each with its own connection and staging dir. */
    const nodes = async (o: { chunkBytes?: number } = {}) => {
      const { db } = await d.db();
      await empty(db);
      const a = await openPgResultStore({ db, stagingDir: stagingDir(), ...o });
      const b = await openPgResultStore({ db: await d.other(), stagingDir: stagingDir(), ...o });
      return { db, a, b };
    };

    test('a result written on node A opens on node B, byte for byte, and B downloads it as .json, .csv and .txt', async () => {
      const { a, b } = await nodes();
      const { id, bytes } = await writeDoc(a, 500);
      const onA = await a.open(id);
      const onB = await b.open(id);
      expect(onB?.bytes).toBe(bytes);
      const doc = await text(onA!);
      expect(await text(onB!)).toBe(doc);
      expect(JSON.parse(doc).proxies).toHaveLength(500);

      const secret = 'pg-store-secret-0123456789abcdef';
      const app = createApp(fakeAppDeps({ results: { secret, store: b } }, 'the pg store test'));
      const get = (ext: ResultExt) =>
        app.handle(new Request(signResultLink({ contentUrl: 'http://127.0.0.1:3000', resultId: id, secret, expiresAt: Math.floor(Date.now() / 1000) + 600, ext })));
      const json = await get('json');
      expect(json.status).toBe(200);
      expect(await json.text()).toBe(doc);
      for (const ext of ['csv', 'txt'] as const) {
        const res = await get(ext);
        expect(res.status).toBe(200);
        const body = await res.text();
        expect(body).toBe(await collect(convertResult(ext, [doc])));
        // csv: header + 500 rows (CRLF); txt: the 50 working proxies
        expect(body.split(ext === 'csv' ? '\r\n' : '\n').filter((l) => l !== '')).toHaveLength(ext === 'csv' ? 501 : 50);
      }
      // gone from the database (retention on any node): 404 on B
      expect((await a.sweep({ cutoffMs: Date.now() + 60_000 })).expired).toBe(1);
      expect((await get('csv')).status).toBe(404);
    });

    test('a document of many chunks streams back exactly, one chunk per pull, the local file gone', async () => {
      const chunkBytes = 4096;
      const { a, b } = await nodes({ chunkBytes });
      const w = await a.create(newResultId());
      const staging = readdirSync(join(w.path, '..'));
      expect(staging).toHaveLength(2); // the spill files while it is written
      for (let i = 0; i < 300; i++) await w.addProxy(record(i, i % 4 === 0));
      const { bytes } = await w.finish({ summary: {}, metadata: {} });
      expect(readdirSync(join(w.path, '..'))).toEqual([]);
      const id = w.path.slice(w.path.lastIndexOf('/') + 1, -'.json'.length);
      const found = await b.open(id);
      expect(found?.bytes).toBe(bytes);
      const pieces: number[] = [];
      const reader = found!.stream().getReader();
      const parts: Uint8Array[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pieces.push(value.byteLength);
        parts.push(value);
      }
      expect(pieces).toHaveLength(Math.ceil(bytes / chunkBytes));
      expect(pieces.slice(0, -1).every((p) => p === chunkBytes)).toBe(true);
      const doc = Buffer.concat(parts).toString('utf8');
      expect(JSON.parse(doc).proxies).toHaveLength(300);
      expect(doc).toBe(await text(found!));
    });

    test('two nodes sweeping at once delete each result once: by age, then by the byte cap', async () => {
      const { a, b } = await nodes();
      const old: { id: string; bytes: number }[] = [];
      for (let i = 0; i < 6; i++) old.push(await writeDoc(i % 2 === 0 ? a : b, 20));
      await sleep(20);
      const cutoff = Date.now();
      await sleep(20);
      const kept: { id: string; bytes: number }[] = [];
      for (let i = 0; i < 4; i++) {
        kept.push(await writeDoc(i % 2 === 0 ? a : b, 20 + i));
        await sleep(15);
      }
      const total = (xs: { bytes: number }[]) => xs.reduce((s, x) => s + x.bytes, 0);
      // room for the two newest: the 6 old by age, then the 2 oldest of the rest by the cap
      const cap = total(kept.slice(2));
      const [ra, rb] = await Promise.all([a.sweep({ cutoffMs: cutoff, maxBytes: cap }), b.sweep({ cutoffMs: cutoff, maxBytes: cap })]);
      expect(ra.expired + rb.expired).toBe(6);
      expect(ra.overCap + rb.overCap).toBe(2);
      expect(ra.bytes + rb.bytes).toBe(total(old) + total(kept.slice(0, 2)));
      expect(await a.size()).toEqual({ results: 2, bytes: cap });
      for (const r of [...old, ...kept.slice(0, 2)]) expect(await b.open(r.id)).toBeNull();
      for (const r of kept.slice(2)) expect(await b.open(r.id)).not.toBeNull();
      // and many sweeps at once over a full store: everything once, nothing twice
      for (let i = 0; i < 8; i++) await writeDoc(i % 2 === 0 ? a : b, 5);
      const before = await a.size();
      const reports = await Promise.all([a, b, a, b].map((s) => s.sweep({ cutoffMs: Date.now() + 60_000 })));
      expect(reports.reduce((s, r) => s + r.expired, 0)).toBe(before.results);
      expect(reports.reduce((s, r) => s + r.bytes, 0)).toBe(before.bytes);
      expect(await b.size()).toEqual({ results: 0, bytes: 0 });
    });

    test('equal last_written times: the cap deletes the smaller id first, as the directory store does by name', async () => {
      const { db, a } = await nodes();
      const ids = ['AAAA', 'BBBB', 'aaaa', 'bbbb'].map((p) => p + newResultId().slice(4));
      for (const id of ids) await writeDoc(a, 3, id);
      await db.execute(sql`UPDATE result_files SET last_written = now() - interval '1 hour'`);
      const each = (await a.size()).bytes / 4;
      expect((await a.sweep({ cutoffMs: 0, maxBytes: 2 * each })).overCap).toBe(2);
      const left = [...ids].sort().slice(2);
      for (const id of left) expect(await a.open(id)).not.toBeNull();
    });

    test('abort while the upload runs rolls it back: finish rejects writer_aborted, nothing stored, no local file', async () => {
      const { db } = await d.db();
      await empty(db);
      let writerToAbort: { abort(): Promise<void> } | undefined;
      let aborting: Promise<void> | undefined;
      // statements 1-2 delete and insert the result_files row; 3.. are chunks: abort at the third chunk
      const store = await openPgResultStore({
        db: hooked(db, (k) => {
          if (k === 5) aborting = writerToAbort?.abort();
        }),
        stagingDir: stagingDir(),
        chunkBytes: 1024,
      });
      const id = newResultId();
      const w = await store.create(id);
      writerToAbort = w;
      for (let i = 0; i < 100; i++) await w.addProxy(record(i, i % 2 === 0));
      expect(await codeOf(w.finish({ summary: {}, metadata: {} }))).toBe('writer_aborted');
      await aborting;
      expect(w.state).toBe('aborted');
      expect(await store.open(id)).toBeNull();
      expect(await store.size()).toEqual({ results: 0, bytes: 0 });
      expect(rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM result_chunks`))[0]?.n).toBe(0);
      expect(readdirSync(join(w.path, '..'))).toEqual([]);
    });

    test('a database error during the upload: finish rejects result_write_failed, nothing stored, no local file', async () => {
      const { db } = await d.db();
      await empty(db);
      const store = await openPgResultStore({
        db: hooked(db, (k) => {
          if (k === 4) throw new Error('connection lost (test)');
        }),
        stagingDir: stagingDir(),
        chunkBytes: 1024,
      });
      const id = newResultId();
      const w = await store.create(id);
      for (let i = 0; i < 50; i++) await w.addProxy(record(i, true));
      const err = await w.finish({ summary: {}, metadata: {} }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isServiceError(err) && err.code).toBe('result_write_failed');
      expect(w.state).toBe('failed');
      expect(await store.open(id)).toBeNull();
      expect(readdirSync(join(w.path, '..'))).toEqual([]);
      await w.abort(); // after a failure: no-op on the files, state aborted
      expect(w.state).toBe('aborted');
    });

    test('a result swept while it is read ends the stream with result_read_failed', async () => {
      const { a, b } = await nodes({ chunkBytes: 1024 });
      const { id } = await writeDoc(a, 200);
      const found = await b.open(id);
      const reader = found!.stream().getReader();
      expect((await reader.read()).value?.byteLength).toBe(1024);
      await a.sweep({ cutoffMs: Date.now() + 60_000 });
      // the chunk asked for ahead may still arrive; the one after cannot
      const err = await (async () => {
        for (;;) {
          const { done } = await reader.read();
          if (done) return null;
        }
      })().catch((e: unknown) => e);
      expect(isServiceError(err) && err.code).toBe('result_read_failed');
    });

    test('crash leftovers in the staging dir go by orphanCutoffMs; a live writer\'s files and recent ones stay', async () => {
      const { db } = await d.db();
      await empty(db);
      const dir = stagingDir();
      const before = await openPgResultStore({ db, stagingDir: dir });
      const dead = await before.create(newResultId());
      for (let i = 0; i < 5; i++) await dead.addProxy(record(i, i === 0));
      // the process dies here; a finished local document it never uploaded lies there too
      const notUploaded = join(dir, `${newResultId()}.json`);
      writeFileSync(notUploaded, '{"summary":{}}\n');
      const after = await openPgResultStore({ db, stagingDir: dir });
      const live = await after.create(newResultId());
      await live.addProxy(record(1, true));
      const old = new Date(Date.now() - 30 * 60_000);
      for (const f of readdirSync(dir)) utimesSync(join(dir, f), old, old);
      const recent = join(dir, `${newResultId()}.json.0123456789ab.tmp`);
      writeFileSync(recent, '{');
      const foreign = join(dir, 'notes.txt');
      writeFileSync(foreign, 'x');
      utimesSync(foreign, old, old);
      const r = await after.sweep({ cutoffMs: Date.now() - 86_400_000, orphanCutoffMs: Date.now() - 15 * 60_000 });
      expect(r).toMatchObject({ expired: 0, overCap: 0, orphans: 3 });
      const left = readdirSync(dir).sort();
      expect(left).toHaveLength(4); // the live writer's two spill files, the recent temp file, the foreign file
      expect(left).toContain('notes.txt');
      expect(left).toContain(recent.slice(dir.length + 1));
      await live.finish({ summary: {}, metadata: {} });
      expect(await after.size()).toMatchObject({ results: 1 });
      await dead.abort();
    });

    test.skipIf(d.name !== 'PostgreSQL')('a sweep that finds another node sweeping deletes nothing in the database, but its own leftovers', async () => {
      const { db, a } = await nodes();
      const { id } = await writeDoc(a, 3);
      const dir = stagingDir();
      const store = await openPgResultStore({ db: await d.other(), stagingDir: dir });
      const leftover = join(dir, `${newResultId()}.json.a1b2c3d4e5f6.working.tmp`);
      writeFileSync(leftover, 'x'.repeat(10));
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(leftover, old, old);
      let release!: () => void;
      let locked!: () => void;
      const held = new Promise<void>((r) => (locked = r));
      const holding = db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${RESULT_SWEEP_LOCK}::bigint)`);
        locked();
        await new Promise<void>((r) => (release = r));
      });
      await held;
      const r = await store.sweep({ cutoffMs: Date.now() + 60_000, orphanCutoffMs: Date.now() });
      release();
      await holding;
      expect(r).toEqual({ expired: 0, overCap: 0, orphans: 1, bytes: 10 });
      expect(await store.open(id)).not.toBeNull();
      expect((await store.sweep({ cutoffMs: Date.now() + 60_000 })).expired).toBe(1);
    });
  });
}
