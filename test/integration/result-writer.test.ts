/**
 * Tests for src/results/writer.ts against the real file system (a temp dir):
 * 100 000 records, order (working by response time, then failed), bounded
 * multi-pass sorting, streamed custom_url_validation, atomic rename, spill
 * cleanup, abort and failure paths; the writer's one machine with a store's
 * publish step (open -> finishing -> finished | failed, aborted from any but
 * finished; a publish that fails, one aborted midway, one that succeeds
 * while abort() comes).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProbeResult } from '../../src/probe/types';
import { CustomUrlFold } from '../../src/results/custom-url-summary';
import { newResultId } from '../../src/results/links';
import { buildProxyRecord, type ProxyRecord } from '../../src/results/record';
import { ServiceError } from '../../src/errors';
import { resultFilePath } from '../../src/results/dir-store';
import { openResultWriter, type Publish } from '../../src/results/writer';
import { INVALID_REASON, InvalidLines } from '../../src/proxy/invalid-lines';
import { convertResult } from '../../src/results/export';
import { invalidLinesJson } from '../../src/results/result-json';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'result-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Deterministic pseudo-random records: ~1/3 working with random times (many ties). */
function makeRecord(i: number): ProxyRecord {
  const h = (Math.imul(i + 1, 2654435761) >>> 0) % 100_000;
  const working = h % 3 === 0;
  const probe: ProbeResult = working
    ? { index: i, status: 'working', statusCode: 200, responseTimeMs: (h % 5000) / 7, anonymity: 'elite', origin: `203.0.113.${i % 250}`, error: null }
    : { index: i, status: 'failed', statusCode: null, responseTimeMs: 2000, anonymity: null, origin: null, error: { code: 'connect_timeout', message: 'timed out "quoted" \u00e9' } };
  const auth = i % 7 === 0 ? { username: `us\u00e9r${i}`, password: 'p"w' } : {};
  return buildProxyRecord({ host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 1 + (i % 65535), ...auth }, probe, null);
}

async function filesIn(d: string): Promise<string[]> {
  return (await readdir(d)).sort();
}

function checkOrder(proxies: ProxyRecord[]): void {
  let seenFailed = false;
  let last = -1;
  let lastIndex = -1;
  for (const p of proxies) {
    if (p.status === 'failed') {
      seenFailed = true;
      continue;
    }
    expect(seenFailed).toBe(false);
    const t = Number.parseFloat(p.responseTime);
    expect(t).toBeGreaterThanOrEqual(last);
    const [, a, b, c] = p.proxy.host.split('.').map(Number) as [number, number, number, number];
    const index = (a << 16) | (b << 8) | c; // makeRecord's arrival index
    if (t === last) expect(index).toBeGreaterThan(lastIndex); // stable: arrival order within ties
    last = t;
    lastIndex = index;
  }
}

describe('openResultWriter', () => {
  test('100 000 records: valid JSON, every record once, order, no spill files left', async () => {
    const sub = join(dir, 'big', 'results');
    const path = join(sub, 'r1.json');
    const w = await openResultWriter(path, { fsync: false });
    const N = 100_000;
    for (let i = 0; i < N; i++) await w.addProxy(makeRecord(i));
    expect(w.working + w.failed).toBe(N);
    const stats = await w.finish({ summary: { total_working: w.working }, metadata: { total_checked: N } });
    expect(w.state).toBe('finished');
    expect(await filesIn(sub)).toEqual(['r1.json']);
    const text = await readFile(path, 'utf8');
    expect(stats.bytes).toBe(Buffer.byteLength(text));
    const doc = JSON.parse(text) as { summary: unknown; metadata: unknown; proxies: ProxyRecord[] };
    expect(Object.keys(doc)).toEqual(['summary', 'metadata', 'proxies']);
    expect(doc.summary).toEqual({ total_working: stats.working });
    expect(doc.proxies.length).toBe(N);
    expect(doc.proxies.filter((p) => p.status === 'working').length).toBe(stats.working);
    checkOrder(doc.proxies);
    // each record exactly as built (failed ones in arrival order)
    const failed = doc.proxies.filter((p) => p.status === 'failed');
    const expectedFailed = Array.from({ length: N }, (_, i) => i).filter((i) => (Math.imul(i + 1, 2654435761) >>> 0) % 100_000 % 3 !== 0);
    expect(failed.length).toBe(expectedFailed.length);
    expect(failed[0]).toEqual(makeRecord(expectedFailed[0]!));
    expect(failed.at(-1)).toEqual(makeRecord(expectedFailed.at(-1)!));
    const ports = new Set(doc.proxies.map((p) => `${p.proxy.host}:${p.proxy.port}`));
    expect(ports.size).toBe(N);
  }, 20_000);

  test('a tiny sort budget gives the same file as one pass (multi-pass, bounded memory)', async () => {
    const N = 3000;
    const make = async (name: string, sortMemoryBytes: number, flushBytes: number) => {
      const p = join(dir, name);
      const w = await openResultWriter(p, { sortMemoryBytes, flushBytes, fsync: true });
      for (let i = 0; i < N; i++) await w.addProxy(makeRecord(i));
      await w.finish({ summary: 1, metadata: 2 });
      return readFile(p, 'utf8');
    };
    const one = await make('one.json', 64 << 20, 1 << 20);
    const many = await make('many.json', 4096, 100);
    expect(many).toBe(one);
    checkOrder(JSON.parse(one).proxies);
  });

  test('only working, only failed, and empty', async () => {
    const cases: [string, number[]][] = [
      ['w.json', [0, 3, 6, 9]],
      ['f.json', [1, 2, 4]],
      ['e.json', []],
    ];
    for (const [name, idx] of cases) {
      const p = join(dir, name);
      const w = await openResultWriter(p, { fsync: false });
      for (const i of idx) await w.addProxy(makeRecord(i));
      await w.finish({ summary: {}, metadata: {} });
      const doc = JSON.parse(await readFile(p, 'utf8'));
      expect(doc.proxies.length).toBe(idx.length);
      checkOrder(doc.proxies);
    }
  });

  test('custom_url_validation: plain value or streamed chunks, last key', async () => {
    const proxies = Array.from({ length: 5000 }, (_, i) => ({ host: `10.1.${i >> 8}.${i & 255}`, port: 1000 + i }));
    const fold = new CustomUrlFold(['https://a.example/', 'https://b.example/']);
    for (let i = 0; i < 5000; i++) fold.add({ index: i, urlIndex: i % 2, success: i % 3 === 0, statusCode: 200, responseTimeMs: 1, error: null });
    const proxyAt = (i: number) => proxies[i]!;
    const expected = fold.result(proxyAt, 1500);
    for (const [name, cuv] of [
      ['c1.json', expected],
      ['c2.json', { toJsonChunks: () => fold.jsonChunks(proxyAt, 1500, 100) }],
    ] as const) {
      const p = join(dir, name);
      const w = await openResultWriter(p, { fsync: false });
      await w.addProxy(makeRecord(0));
      await w.addProxy(makeRecord(1));
      await w.finish({ summary: {}, metadata: {}, custom_url_validation: cuv });
      const doc = JSON.parse(await readFile(p, 'utf8'));
      expect(Object.keys(doc)).toEqual(['summary', 'metadata', 'proxies', 'custom_url_validation']);
      expect(doc.custom_url_validation).toEqual(expected);
    }
  });

  test('invalid_lines: after proxies, one per line, before custom_url_validation; the exports read past them', async () => {
    const lines = new InvalidLines();
    for (let i = 1; i <= 3000; i++) lines.add(i * 2, INVALID_REASON.NO_PORT, `junk ${i}`);
    for (const [name, n] of [['i1.json', 2], ['i2.json', 0]] as const) {
      const p = join(dir, name);
      const w = await openResultWriter(p, { fsync: false });
      for (let i = 0; i < n; i++) await w.addProxy(makeRecord(i));
      await w.finish({ summary: {}, metadata: {}, invalid_lines: invalidLinesJson(lines), custom_url_validation: { x: 1 } });
      const text = await readFile(p, 'utf8');
      const doc = JSON.parse(text);
      expect(Object.keys(doc)).toEqual(['summary', 'metadata', 'proxies', 'invalid_lines', 'custom_url_validation']);
      expect(doc.invalid_lines).toEqual([...lines.all()]);
      expect(text).toContain('\n{"line":6,"text":"junk 3","reason":"no port: expected host:port"},\n');
      // the JSON export gives the document back; the CSV has its rows only
      const json = (await Array.fromAsync(convertResult('json', [text]))).join('');
      expect(JSON.parse(json)).toEqual(doc);
      const csv = (await Array.fromAsync(convertResult('csv', [text]))).join('');
      expect(csv.trimEnd().split('\r\n')).toHaveLength(1 + n);
    }
    const p = join(dir, 'i3.json');
    const w = await openResultWriter(p, { fsync: false });
    await w.addProxy(makeRecord(0));
    await w.finish({ summary: {}, metadata: {}, invalid_lines: invalidLinesJson(new InvalidLines()) });
    expect(JSON.parse(await readFile(p, 'utf8')).invalid_lines).toEqual([]);
  });

  test('abort removes everything, is idempotent, and closes the writer', async () => {
    const sub = join(dir, 'abort');
    const w = await openResultWriter(join(sub, 'a.json'), { flushBytes: 1000 });
    for (let i = 0; i < 500; i++) await w.addProxy(makeRecord(i));
    expect((await filesIn(sub)).length).toBe(2); // the two spill files
    await Promise.all([w.abort(), w.abort()]);
    expect(w.state).toBe('aborted');
    expect(await filesIn(sub)).toEqual([]);
    await expect(w.addProxy(makeRecord(1))).rejects.toThrow(ServiceError);
    await expect(w.addProxy(makeRecord(1))).rejects.toMatchObject({ code: 'writer_closed' });
    await expect(w.finish({ summary: {}, metadata: {} })).rejects.toThrow('aborted');
  });

  test('abort during finish: finish rejects with writer_aborted and no file remains', async () => {
    const sub = join(dir, 'abort2');
    const w = await openResultWriter(join(sub, 'a.json'), { sortMemoryBytes: 2048, fsync: false });
    for (let i = 0; i < 3000; i++) await w.addProxy(makeRecord(i));
    const done = w.finish({ summary: {}, metadata: {} });
    const aborted = w.abort();
    let code = '';
    try {
      await done;
    } catch (e) {
      code = (e as ServiceError).code;
    }
    await aborted;
    expect(code).toBe('writer_aborted');
    expect(await filesIn(sub)).toEqual([]);
  });

  test('abort after finish keeps the file; finish twice is refused', async () => {
    const p = join(dir, 'kept.json');
    const w = await openResultWriter(p, { fsync: false });
    await w.addProxy(makeRecord(0));
    await w.finish({ summary: {}, metadata: {} });
    await w.abort();
    expect(w.state).toBe('finished');
    expect((await stat(p)).size).toBeGreaterThan(0);
    await expect(w.finish({ summary: {}, metadata: {} })).rejects.toThrow('finished');
  });

  test('an I/O failure fails the writer with a code and cleans up', async () => {
    const sub = join(dir, 'fail');
    const w = await openResultWriter(join(sub, 'x.json'), { fsync: false });
    await w.addProxy(makeRecord(0));
    // the target directory disappears: the temp file cannot be created
    await rm(sub, { recursive: true, force: true });
    let err: ServiceError | undefined;
    try {
      await w.finish({ summary: {}, metadata: {} });
    } catch (e) {
      err = e as ServiceError;
    }
    expect(err?.code).toBe('result_write_failed');
    expect(err?.cause).toBeDefined();
    expect(w.state).toBe('failed');
    await w.abort();
  });

  test('open fails with a code when the directory cannot be made', async () => {
    const blocker = join(dir, 'blocker');
    await Bun.write(blocker, 'a file, not a directory');
    let code = '';
    try {
      await openResultWriter(join(blocker, 'r.json'));
    } catch (e) {
      code = (e as ServiceError).code;
    }
    expect(code).toBe('result_write_failed');
  });

  test('resultFilePath', () => {
    const id = newResultId();
    expect(resultFilePath('/data', id)).toBe(`/data/results/${id}.json`);
    expect(() => resultFilePath('/data', '../../etc/passwd')).toThrow(ServiceError);
    expect(() => resultFilePath('/data', '../../etc/passwd')).toThrow(expect.objectContaining({ code: 'result_bad_id' }));
  });

  describe('the publish step (the store\'s)', () => {
    /** A publish that records what it got and waits for `go` before it finishes. */
    function gatedPublish(opts: { fail?: boolean; checkAfterGate?: boolean } = {}) {
      let go!: () => void;
      let entered!: () => void;
      const gate = new Promise<void>((r) => (go = r));
      const inside = new Promise<void>((r) => (entered = r));
      const calls = { published: [] as string[], retracted: 0 };
      const publish: Publish = {
        async publish(tmpPath, checkAborted) {
          entered();
          await gate;
          if (opts.checkAfterGate === true) checkAborted();
          if (opts.fail === true) throw new Error('upload failed (test)');
          calls.published.push(await readFile(tmpPath, 'utf8'));
          await rm(tmpPath); // a publish consumes the file
        },
        async retract() {
          calls.retracted++;
        },
      };
      return { publish, go, inside, calls };
    }

    test('finish hands the finished document to publish, once; the writer keeps no file of its own', async () => {
      const sub = join(dir, 'pub-ok');
      const g = gatedPublish();
      const w = await openResultWriter(join(sub, 'r.json'), { fsync: false, publish: g.publish });
      await w.addProxy(makeRecord(0));
      const done = w.finish({ summary: { n: 1 }, metadata: {} });
      await g.inside;
      expect(w.state).toBe('finishing');
      g.go();
      expect(await done).toMatchObject({ bytes: expect.any(Number) });
      expect(w.state).toBe('finished');
      expect(g.calls.published).toHaveLength(1);
      expect(JSON.parse(g.calls.published[0]!).summary).toEqual({ n: 1 });
      expect(await filesIn(sub)).toEqual([]);
      await w.abort(); // no-op once finished: nothing retracted
      expect(g.calls.retracted).toBe(0);
      expect(w.state).toBe('finished');
    });

    test('a publish that fails: finish rejects result_write_failed, the writer is failed, no file is left; abort then ends it', async () => {
      const sub = join(dir, 'pub-fail');
      const g = gatedPublish({ fail: true });
      const w = await openResultWriter(join(sub, 'r.json'), { fsync: false, publish: g.publish });
      await w.addProxy(makeRecord(0));
      const done = w.finish({ summary: {}, metadata: {} }).then(() => null, (e: unknown) => e);
      g.go();
      const err = (await done) as ServiceError;
      expect(err.code).toBe('result_write_failed');
      expect((err.cause as Error).message).toBe('upload failed (test)');
      expect(w.state).toBe('failed');
      expect(await filesIn(sub)).toEqual([]);
      await expect(w.finish({ summary: {}, metadata: {} })).rejects.toMatchObject({ code: 'writer_closed' });
      await w.abort();
      expect(w.state).toBe('aborted');
    });

    // abort() comes while publish runs: a publish that notices it leaves nothing; one that succeeds anyway is retracted
    test.each([
      { name: 'publish notices it: nothing published or retracted', checkAfterGate: true, published: 0, retracted: 0 },
      { name: 'publish succeeds anyway: abort wins, the result is retracted', checkAfterGate: false, published: 1, retracted: 1 },
    ])('abort while publish runs, $name; finish rejects writer_aborted', async ({ checkAfterGate, published, retracted }) => {
      const sub = join(dir, `pub-abort-${published}`);
      const g = gatedPublish({ checkAfterGate });
      const w = await openResultWriter(join(sub, 'r.json'), { fsync: false, publish: g.publish });
      await w.addProxy(makeRecord(0));
      const done = w.finish({ summary: {}, metadata: {} }).then(() => null, (e: unknown) => e);
      await g.inside;
      const aborting = w.abort();
      g.go();
      expect(((await done) as ServiceError).code).toBe('writer_aborted');
      await aborting;
      expect(w.state).toBe('aborted');
      expect(g.calls.published).toHaveLength(published);
      expect(g.calls.retracted).toBe(retracted);
      expect(await filesIn(sub)).toEqual([]);
    });
  });
});
