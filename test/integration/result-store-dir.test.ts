/**
 * Tests for src/results/dir-store.ts: the ResultStore contract
 * (test/helpers/result-store-contract.ts) on a real temporary data dir, and
 * what is particular to the directory: the file names
 * (DATA_DIR/results/<id>.json, as before the port existed), no stray files
 * after abort, the sweep taking crash leftovers (by their own cutoff, never a
 * live writer's) but never subdirectories, the disk cap counting result
 * files only, size counting result files only, and a missing directory.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leftoverOf, openDirResultStore, resultFilePath } from '../../src/results/dir-store';
import type { ProxyRecord } from '../../src/results/record';
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

const deadRecord = (port: number): ProxyRecord => ({
  proxy: { host: '198.51.100.9', port, hasAuth: false, format: 'standard' },
  status: 'failed',
  statusCode: null,
  responseTime: '1.00 ms',
  anonymity: null,
  origin: null,
  country: null,
  country_name: null,
  location: null,
  isp: null,
  asn: null,
  coordinates: null,
  error: { code: 'connect_refused', message: 'refused' },
});

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
    expect(await store.sweep({ cutoffMs: Date.now() - 3_600_000 })).toEqual({ expired: 0, overCap: 0, orphans: 1, bytes: 8 });
    expect(existsSync(stray)).toBe(false);
    expect(existsSync(sub)).toBe(true);
    expect(await store.open(id)).not.toBeNull();
  });

  test('crash leftovers: a dead writer\'s spill and temp files go by orphanCutoffMs, results keep to cutoffMs', async () => {
    const dataDir = join(root, `crash${n++}`);
    const before = await openDirResultStore({ dataDir, fsync: false });
    const dir = join(dataDir, 'results');
    const kept = await finished(before);
    const dead = await before.create(newResultId());
    for (let i = 0; i < 5; i++) await dead.addProxy(deadRecord(i));
    // the process dies here: `dead` is never finished nor aborted; a new process opens the store
    const after = await openDirResultStore({ dataDir, fsync: false });
    const leftovers = readdirSync(dir).filter((f) => f.endsWith('.tmp'));
    expect(leftovers).toHaveLength(2);
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    for (const f of leftovers) utimesSync(join(dir, f), tenMinutesAgo, tenMinutesAgo);
    const tempOfAnother = join(dir, `${newResultId()}.json.0123456789ab.tmp`);
    writeFileSync(tempOfAnother, '{'); // written just now: a minute old at most is left alone
    const r = await after.sweep({ cutoffMs: Date.now() - 7 * 86_400_000, orphanCutoffMs: Date.now() - 5 * 60_000 });
    expect(r).toMatchObject({ expired: 0, overCap: 0, orphans: 2 });
    expect(readdirSync(dir).sort()).toEqual([`${kept}.json`, tempOfAnother.slice(dir.length + 1)].sort());
    await dead.abort();
  });

  test("a live writer's spill files survive any sweep, and it still finishes", async () => {
    const store = await fresh();
    const dir = join(dataDirs.get(store)!, 'results');
    const w = await store.create(newResultId());
    await w.addProxy(deadRecord(1));
    const spills = readdirSync(dir);
    expect(spills).toHaveLength(2);
    const old = new Date(Date.now() - 30 * 86_400_000);
    for (const f of spills) utimesSync(join(dir, f), old, old);
    const future = Date.now() + 86_400_000;
    expect(await store.sweep({ cutoffMs: future, maxBytes: 1, orphanCutoffMs: future })).toEqual({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });
    expect(readdirSync(dir).sort()).toEqual(spills.sort());
    await w.finish({ summary: {}, metadata: {} });
    // finished and settled: its files are its result now, and a later sweep may take it by age
    expect((await store.sweep({ cutoffMs: future })).expired).toBe(1);
  });

  test('the disk cap counts and deletes <id>.json files only: other files go by age alone', async () => {
    const store = await fresh();
    const dir = join(dataDirs.get(store)!, 'results');
    const other = join(dir, 'notes.json');
    writeFileSync(other, 'x'.repeat(10_000));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(other, old, old);
    const id = await finished(store);
    const r = await store.sweep({ cutoffMs: 0, maxBytes: 100 });
    expect(r).toEqual({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });
    expect(existsSync(other)).toBe(true);
    expect(await store.open(id)).not.toBeNull();
  });

  test('leftoverOf names the writer of a spill or temp file, and nothing else', () => {
    const id = newResultId();
    expect(leftoverOf(`${id}.json.a1b2c3d4e5f6.tmp`)).toBe(id);
    expect(leftoverOf(`${id}.json.a1b2c3d4e5f6.working.tmp`)).toBe(id);
    expect(leftoverOf(`${id}.json.a1b2c3d4e5f6.failed.tmp`)).toBe(id);
    for (const name of [`${id}.json`, `${id}.json.tmp`, `${id}.json.XYZ.tmp`, 'x.json.abc.tmp', `${id}.json.abc.other.tmp`, `${id}.csv.abc.tmp`]) {
      expect(leftoverOf(name)).toBeNull();
    }
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
    expect(await store.sweep({ cutoffMs: Date.now(), maxBytes: 1 })).toEqual({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });
    expect(await store.size()).toEqual({ results: 0, bytes: 0 });
    const id = await finished(store);
    expect(readdirSync(dir)).toEqual([`${id}.json`]);
  });
});
