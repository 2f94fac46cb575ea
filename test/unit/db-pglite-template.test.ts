/**
 * db/pglite-template.ts, the pure parts: the cache file's name (PGlite version
 * and settings in it) and the check that a cached tarball holds a data dir
 * before PGlite sees it. Building and starting from a real template:
 * test/integration/db-client.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { checkTemplate, templateFileName } from '../../db/pglite-template';

/** A ustar archive of the given files (enough of the format for checkTemplate and tar readers). */
function tar(files: Record<string, string>): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder();
  const blocks: Uint8Array[] = [];
  for (const [name, body] of Object.entries(files)) {
    const h = new Uint8Array(512);
    h.set(enc.encode(name), 0);
    h.set(enc.encode('0000644\0'), 100);
    h.set(enc.encode(`${body.length.toString(8).padStart(11, '0')}\0`), 124);
    h.set(enc.encode('ustar\u000000'), 257);
    h[156] = 0x30;
    blocks.push(h);
    const data = new Uint8Array(Math.ceil(body.length / 512) * 512);
    data.set(enc.encode(body));
    blocks.push(data);
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let off = 0;
  for (const b of blocks) {
    out.set(b, off);
    off += b.length;
  }
  return out;
}

describe('templateFileName', () => {
  test('names the PGlite version and a hash of the settings, whatever their order', () => {
    const a = templateFileName('0.5.16', { shared_buffers: '16MB', max_connections: '5' });
    expect(a).toMatch(/^pglite-0\.5\.16-initdb-[0-9a-f]{12}\.tar\.gz$/);
    expect(templateFileName('0.5.16', { max_connections: '5', shared_buffers: '16MB' })).toBe(a);
    expect(templateFileName('0.5.17', { shared_buffers: '16MB', max_connections: '5' })).not.toBe(a);
    expect(templateFileName('0.5.16', { shared_buffers: '32MB', max_connections: '5' })).not.toBe(a);
    expect(templateFileName('../x', {})).not.toContain('/');
  });
});

describe('checkTemplate', () => {
  test('a gzipped data dir passes, inflated', () => {
    const t = tar({ 'base/1/1259': 'x'.repeat(700), PG_VERSION: '17\n' });
    expect(checkTemplate(Bun.gzipSync(t))).toEqual(t);
    const nested = tar({ 'pgdata/PG_VERSION': '17\n' });
    expect(checkTemplate(Bun.gzipSync(nested))).toEqual(nested);
  });

  test('anything else is refused: not gzip, gzip of no tar, a tar without PG_VERSION, a truncated gzip', () => {
    const good = Bun.gzipSync(tar({ PG_VERSION: '17\n' }));
    expect(checkTemplate(new Uint8Array(4096).fill(7))).toBeNull();
    expect(checkTemplate(Bun.gzipSync(new Uint8Array(4096).fill(7)))).toBeNull();
    expect(checkTemplate(Bun.gzipSync(tar({ 'base/1/1259': 'x', 'global/pg_control': 'y' })))).toBeNull();
    expect(checkTemplate(good.subarray(0, good.length - 10) as Uint8Array<ArrayBuffer>)).toBeNull();
  });
});
