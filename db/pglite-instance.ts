/**
 * How an embedded PGlite is made, the same in either thread (db/client.ts on
 * the main thread, db/pglite-host.ts in the database's own): its PostgreSQL
 * settings, the instance over a data dir or memory (from a template or by
 * initdb), and the garbage a new data dir leaves.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/**
 * PostgreSQL settings of the embedded database, chosen for memory.
 *
 * PGlite's postgres runs in a WASM memory that grows and never shrinks, and
 * the shared memory sized from these settings is zero-filled at start, so
 * all of it is resident from the first second. PostgreSQL's defaults
 * (shared_buffers 128MB, max_connections 100) grow it far beyond the 128 MiB
 * the module declares; these keep it near that (bench/pglite-memory.ts
 * measures it; the figures: bench/RESULTS.md "PGlite sized for memory"):
 * - shared_buffers 16MB: 2048 pages, far more than the per-job queries touch
 *   and enough for /me over ~25 000 scans; bigger scans read through the OS
 *   page cache (not in our RSS). wal_buffers and the SLRU caches are sized
 *   from it. Smaller makes /me slower.
 * - max_connections 5: single-user mode has one backend; the per-backend
 *   arrays and lock tables are sized from it (must exceed the 3 reserved).
 * - maintenance_work_mem 16MB: bounds what a CREATE INDEX in a migration
 *   adds to the never-shrinking heap (default 64MB).
 * Given on the command line (it wins over postgresql.conf, so existing data
 * dirs get them too) and to initdb (a new data dir's postgresql.conf).
 * PGlite's `initialMemory` cannot help: below the module's 128 MiB the WASM
 * link fails (and waitReady never settles); the part never touched costs nothing.
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  shared_buffers: '16MB',
  max_connections: '5',
  maintenance_work_mem: '16MB',
});

/**
 * The embedded database's WAL, sized for an embedded database (issue 29: a
 * pool's owner rewrites its state every POOL_FLUSH_S): PostgreSQL's default
 * max_wal_size (1 GB) let pg_wal grow to 800 MiB under a steady pool.
 * A single-user backend never asks for a checkpoint by itself (neither by
 * WAL volume nor by time): db/pglite-checkpoints.ts runs them, and a
 * checkpoint keeps max_wal_size of segments and recycles no more than
 * min_wal_size 32MB. Given on the command line only
 * (not to initdb): the template's name (db/pglite-template.ts) does not change.
 */
export const PGLITE_WAL_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  max_wal_size: '64MB',
  min_wal_size: '32MB',
  checkpoint_timeout: '2min',
});

/** PGlite options shared by every embedded instance (data dir, in memory, template). */
export function pgliteOptions(): { startParams: string[]; initDbStartParams: string[] } {
  const pairs = Object.entries(PGLITE_SETTINGS).map(([k, v]) => `${k}=${v}`);
  const wal = Object.entries(PGLITE_WAL_SETTINGS).map(([k, v]) => `${k}=${v}`);
  return {
    startParams: [...PGlite.defaultStartParams, ...[...pairs, ...wal].flatMap((p) => ['-c', p])],
    initDbStartParams: pairs.flatMap((p) => ['--set', p]),
  };
}

/**
 * After a new data dir was made (initdb or template): initdb ran in a second
 * PGlite instance (its own WASM memory, a copy of it, the data dir as a
 * tarball), or the template's tarball was read and inflated. Either is
 * garbage once open resolves, but the GC of an idle server may leave it for a
 * long time. Collected here, once per new data dir (the figures:
 * bench/RESULTS.md "PGlite sized for memory").
 */
export async function collectInitdbGarbage(): Promise<void> {
  // After a timer turn: collected right away (or after setImmediate) half of it stays.
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  Bun.gc(true);
}

/** PGlite's two WASM modules, compiled. */
export interface PgliteModules {
  pglite: WebAssembly.Module;
  initdb: WebAssembly.Module;
}

let compiled: Promise<PgliteModules | null> | undefined;

/**
 * PGlite's WASM modules compiled once per process and handed to every
 * instance (a compiled module crosses to a worker thread by postMessage):
 * each database thread compiled pglite.wasm (9 MB) again, and in a worker
 * thread that doubled its start (1.6-2.8 s against 3.6-5.2 s with a
 * template, on the loaded 2-core machine). null when they cannot be read
 * (PGlite then compiles them itself).
 */
export function compiledPgliteModules(): Promise<PgliteModules | null> {
  compiled ??= (async () => {
    const dist = (name: string) => fileURLToPath(new URL(name, import.meta.resolve('@electric-sql/pglite')));
    try {
      const [pglite, initdb] = await Promise.all([readFile(dist('pglite.wasm')), readFile(dist('initdb.wasm'))]);
      return { pglite: await WebAssembly.compile(pglite), initdb: await WebAssembly.compile(initdb) };
    } catch {
      return null;
    }
  })();
  return compiled;
}

/**
 * A PGlite over `dataDir` (null: in memory), started from `template` (a
 * dumpDataDir() tarball) when given, with `modules` when compiled already;
 * not yet ready (await waitReady).
 */
export function newPglite(dataDir: string | null, template: Blob | undefined, modules: PgliteModules | null = null): PGlite {
  const options = {
    ...pgliteOptions(),
    ...(template !== undefined ? { loadDataDir: template } : {}),
    ...(modules !== null ? { pgliteWasmModule: modules.pglite, initdbWasmModule: modules.initdb } : {}),
  };
  return dataDir === null ? new PGlite(options) : new PGlite(dataDir, options);
}
