/**
 * Tests for src/results/dir-store.ts: the ResultStore contract
 * (test/helpers/result-store-contract.ts) on a real temporary data dir, and
 * what is particular to the directory: the file names
 * (DATA_DIR/results/<id>.json, as before the port existed), no stray files
 * after abort, the sweep taking crash leftovers but never subdirectories,
 * size counting result files only, and a missing directory.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDirResultStore, resultFilePath } from '../../src/results/dir-store';
import { newResultId } from '../../src/results/links';
import type { ResultStore } from '../../src/results/store';
import { resultStoreContract } from '../helpers/result-store-contract';

const root = mkdtempSync(join(tmpdir(), 'result-store-dir-'));
let n = 0;
const dataDirs = new Map<ResultStore, string>();

async function fresh(): Promise<ResultStore> {
  const dataDir = join(root, `d${n++}`);
  const store = await openDirResultStore({ dataDir, fsync: false });
  dataDirs.set(store, dataDir);
  return store;
}

resultStoreContract('directory', {
  fresh,
  async reopen(store) {
    const dataDir = dataDirs.get(store)!;
    const other = await openDirResultStore({ dataDir, fsync: true });
    dataDirs.set(other, dataDir);
    return other;
  },
  async cleanup() {
    // the root goes after every test of this file (below)
  },
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the directory adapter', () => {
  const finished = async (store: ResultStore, id = newResultId()) => {
    const w = await store.create(id);
    await w.finish({ summary: {}, metadata: {} });
    return id;
  };

  test('opening the store makes DATA_DIR/results; a result is DATA_DIR/results/<id>.json', async () => {
    const store = await fresh();
    const dataDir = dataDirs.get(store)!;
    expect(readdirSync(join(dataDir, 'results'))).toEqual([]);
    const id = await finished(store);
    expect(readdirSync(join(dataDir, 'results'))).toEqual([`${id}.json`]);
    expect(resultFilePath(dataDir, id)).toBe(join(dataDir, 'results', `${id}.json`));
    expect(readFileSync(resultFilePath(dataDir, id), 'utf8')).toBe('{"summary":{},"metadata":{},"proxies":[]}\n');
  });

  test('abort removes the spill files it made', async () => {
    const store = await fresh();
    const dir = join(dataDirs.get(store)!, 'results');
    const w = await store.create(newResultId());
    expect(readdirSync(dir)).toHaveLength(2); // the two spill files
    await w.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  test('sweep: old crash leftovers go too, subdirectories never; size counts <id>.json files only', async () => {
    const store = await fresh();
    const dir = join(dataDirs.get(store)!, 'results');
    const id = await finished(store);
    const stray = join(dir, `${newResultId()}.json.abc123.working.tmp`);
    writeFileSync(stray, '{"x":1}\n');
    const sub = join(dir, 'nested');
    mkdirSync(sub);
    const old = new Date(Date.now() - 86_400_000);
    utimesSync(stray, old, old);
    utimesSync(sub, old, old);
    expect(await store.size()).toEqual({ results: 1, bytes: Buffer.byteLength('{"summary":{},"metadata":{},"proxies":[]}\n') });
    expect(await store.sweep(Date.now() - 3_600_000)).toBe(1);
    expect(existsSync(stray)).toBe(false);
    expect(existsSync(sub)).toBe(true);
    expect(await store.open(id)).not.toBeNull();
  });

  test('a directory named like a result is not a result', async () => {
    const store = await fresh();
    const id = newResultId();
    mkdirSync(join(dataDirs.get(store)!, 'results', `${id}.json`));
    expect(await store.open(id)).toBeNull();
    expect(await store.size()).toEqual({ results: 0, bytes: 0 });
  });

  test('a results directory removed under the store: open null, sweep 0, size 0, create makes it again', async () => {
    const store = await fresh();
    const dir = join(dataDirs.get(store)!, 'results');
    rmSync(dir, { recursive: true });
    expect(await store.open(newResultId())).toBeNull();
    expect(await store.sweep(Date.now())).toBe(0);
    expect(await store.size()).toEqual({ results: 0, bytes: 0 });
    const id = await finished(store);
    expect(readdirSync(dir)).toEqual([`${id}.json`]);
  });
});
