/**
 * The ResultStore contract (src/results/store.ts) as a test suite any
 * adapter runs: `resultStoreContract('dir', harness)` inside its own test
 * file. The harness makes empty stores and reopens one over the same
 * backing (what a restarted service would see).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { isServiceError } from '../../src/errors';
import { newResultId } from '../../src/results/links';
import type { ProxyRecord } from '../../src/results/record';
import type { ResultStore, StoredResult } from '../../src/results/store';

export interface StoreHarness {
  /** A new, empty store. */
  fresh(): Promise<ResultStore>;
  /** Another store over the same backing as `store`. */
  reopen(store: ResultStore): Promise<ResultStore>;
  /** Removes everything the harness made. */
  cleanup(): Promise<void>;
}

const record = (port: number, ms: number | null): ProxyRecord => ({
  proxy: { host: '198.51.100.7', port, hasAuth: false, format: 'standard' },
  status: ms === null ? 'failed' : 'working',
  statusCode: ms === null ? null : 200,
  responseTime: `${(ms ?? 3).toFixed(2)} ms`,
  anonymity: ms === null ? null : 'elite',
  origin: ms === null ? null : '198.51.100.7',
  country: null,
  country_name: null,
  location: 'Zürich "quoted"',
  isp: null,
  asn: null,
  coordinates: null,
  ...(ms === null ? { error: { code: 'connect_refused', message: 'refused' } } : {}),
});

/** Arrival order: slow working, failed, fast working. */
const RECORDS = [record(1, 20), record(2, null), record(3, 5)];
/** The document those records make: working by time, then failed; one record per line. */
const EXPECTED =
  '{"summary":{"total_working":2},"metadata":{"job":"j"},"proxies":[\n' +
  [RECORDS[2], RECORDS[0], RECORDS[1]].map((r) => JSON.stringify(r)).join(',\n') +
  '\n],"custom_url_validation":{"per_url_summary":[]}}\n';

async function bytesOf(r: StoredResult): Promise<string> {
  return new Response(r.stream()).text();
}

async function writeResult(store: ResultStore, id = newResultId()): Promise<{ id: string; bytes: number }> {
  const w = await store.create(id);
  for (const r of RECORDS) await w.addProxy(r);
  const stats = await w.finish({ summary: { total_working: 2 }, metadata: { job: 'j' }, custom_url_validation: { per_url_summary: [] } });
  return { id, bytes: stats.bytes };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return isServiceError(err) ? err.code : `not a ServiceError: ${String(err)}`;
  }
}

export function resultStoreContract(name: string, harness: StoreHarness): void {
  describe(`ResultStore contract: ${name}`, () => {
    afterAll(() => harness.cleanup());

    test('create, finish, then open reads back exactly the bytes written (twice, and after a reopen)', async () => {
      const store = await harness.fresh();
      const { id, bytes } = await writeResult(store);
      const found = await store.open(id);
      expect(found).not.toBeNull();
      expect(found!.resultId).toBe(id);
      expect(found!.bytes).toBe(Buffer.byteLength(EXPECTED));
      expect(bytes).toBe(found!.bytes);
      expect(await bytesOf(found!)).toBe(EXPECTED);
      expect(await bytesOf(found!)).toBe(EXPECTED);
      const again = await (await harness.reopen(store)).open(id);
      expect(await bytesOf(again!)).toBe(EXPECTED);
    });

    test('a result is invisible until finish() resolves', async () => {
      const store = await harness.fresh();
      const id = newResultId();
      const w = await store.create(id);
      await w.addProxy(RECORDS[0]!);
      expect(await store.open(id)).toBeNull();
      await w.finish({ summary: {}, metadata: {} });
      expect(await store.open(id)).not.toBeNull();
    });

    test('abort leaves nothing: not openable, not counted', async () => {
      const store = await harness.fresh();
      const id = newResultId();
      const w = await store.create(id);
      for (let i = 0; i < 200; i++) await w.addProxy(record(10 + i, i % 2 === 0 ? i : null));
      await w.abort();
      expect(w.state).toBe('aborted');
      expect(await store.open(id)).toBeNull();
      expect(await store.size()).toEqual({ results: 0, bytes: 0 });
      expect(await (await harness.reopen(store)).size()).toEqual({ results: 0, bytes: 0 });
    });

    test('unknown ids and non-ids open as null; create refuses a non-id', async () => {
      const store = await harness.fresh();
      await writeResult(store);
      expect(await store.open(newResultId())).toBeNull();
      for (const bad of ['', '../../etc/passwd', 'a'.repeat(21), `${newResultId()}.json`]) {
        expect(await store.open(bad)).toBeNull();
        expect(await codeOf(store.create(bad))).toBe('result_bad_id');
      }
    });

    test('sweep deletes by age and reports what it deleted', async () => {
      const store = await harness.fresh();
      const old = await writeResult(store);
      await sleep(30);
      const cutoff = Date.now();
      await sleep(30);
      const fresh = await writeResult(store);
      expect(await store.sweep({ cutoffMs: 0 })).toEqual({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });
      expect(await store.sweep({ cutoffMs: cutoff })).toEqual({ expired: 1, overCap: 0, orphans: 0, bytes: old.bytes });
      expect(await store.open(old.id)).toBeNull();
      expect(await bytesOf((await store.open(fresh.id))!)).toBe(EXPECTED);
      expect(await store.sweep({ cutoffMs: cutoff })).toEqual({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });
      expect((await store.sweep({ cutoffMs: Date.now() + 60_000 })).expired).toBe(1);
      expect(await store.open(fresh.id)).toBeNull();
    });

    test('disk cap: over maxBytes the oldest results go first until the rest fit; 0 is no cap', async () => {
      const store = await harness.fresh();
      const written: { id: string; bytes: number }[] = [];
      for (let i = 0; i < 4; i++) {
        written.push(await writeResult(store));
        await sleep(20);
      }
      const each = written[0]!.bytes;
      const total = 4 * each;
      const none = { expired: 0, overCap: 0, orphans: 0, bytes: 0 };
      expect(await store.sweep({ cutoffMs: 0, maxBytes: 0 })).toEqual(none);
      expect(await store.sweep({ cutoffMs: 0, maxBytes: total })).toEqual(none);
      // one byte over room for two: the two oldest go, the two newest stay
      expect(await store.sweep({ cutoffMs: 0, maxBytes: 2 * each + 1 })).toEqual({ expired: 0, overCap: 2, orphans: 0, bytes: 2 * each });
      for (const w of written.slice(0, 2)) expect(await store.open(w.id)).toBeNull();
      for (const w of written.slice(2)) expect(await bytesOf((await store.open(w.id))!)).toBe(EXPECTED);
      expect(await store.size()).toEqual({ results: 2, bytes: 2 * each });
      // a cap smaller than any one result leaves nothing
      expect((await store.sweep({ cutoffMs: 0, maxBytes: 1 })).overCap).toBe(2);
      expect(await store.size()).toEqual({ results: 0, bytes: 0 });
    });

    test('age first, then the cap on what is left', async () => {
      const store = await harness.fresh();
      const a = await writeResult(store);
      await sleep(30);
      const cutoff = Date.now();
      await sleep(30);
      const b = await writeResult(store);
      await sleep(20);
      const c = await writeResult(store);
      const r = await store.sweep({ cutoffMs: cutoff, maxBytes: c.bytes });
      expect(r).toEqual({ expired: 1, overCap: 1, orphans: 0, bytes: a.bytes + b.bytes });
      expect(await store.open(b.id)).toBeNull();
      expect(await store.open(c.id)).not.toBeNull();
    });

    test('a sweep never touches a result still being written, however old its cutoffs', async () => {
      const store = await harness.fresh();
      const id = newResultId();
      const w = await store.create(id);
      for (let i = 0; i < 50; i++) await w.addProxy(record(100 + i, i % 3 === 0 ? null : i));
      await sleep(20);
      const future = Date.now() + 86_400_000;
      const r = await store.sweep({ cutoffMs: future, maxBytes: 1, orphanCutoffMs: future });
      expect(r.orphans).toBe(0);
      await w.addProxy(RECORDS[2]!);
      const stats = await w.finish({ summary: {}, metadata: {} });
      const found = await store.open(id);
      expect(found?.bytes).toBe(stats.bytes);
      expect(w.working + w.failed).toBe(51);
    });

    test('size counts finished results and their bytes', async () => {
      const store = await harness.fresh();
      expect(await store.size()).toEqual({ results: 0, bytes: 0 });
      const a = await writeResult(store);
      const b = await writeResult(store);
      const open = await store.create(newResultId()); // not finished: not counted
      await open.addProxy(RECORDS[0]!);
      expect(await store.size()).toEqual({ results: 2, bytes: a.bytes + b.bytes });
      await open.abort();
    });

    test('close aborts writers still open, is idempotent, and refuses later calls', async () => {
      const store = await harness.fresh();
      const done = await writeResult(store);
      const id = newResultId();
      const w = await store.create(id);
      await w.addProxy(RECORDS[0]!);
      await Promise.all([store.close(), store.close()]);
      expect(w.state).toBe('aborted');
      for (const call of [store.create(newResultId()), store.open(done.id), store.sweep({ cutoffMs: 0 }), store.size()]) {
        expect(await codeOf(call)).toBe('result_store_closed');
      }
      const other = await harness.reopen(store);
      expect(await other.open(id)).toBeNull();
      expect(await bytesOf((await other.open(done.id))!)).toBe(EXPECTED);
    });
  });
}
