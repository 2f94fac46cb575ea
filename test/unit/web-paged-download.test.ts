import { describe, expect, test } from 'bun:test';
import { csvWithoutHeader, downloadAll, type DownloadPage } from '../../src/web/client/paged-download';

/** A reader over fixed pages keyed by cursor; records the cursors asked for. */
function reader(pages: Record<string, DownloadPage>) {
  const asked: (string | null)[] = [];
  const read = async (cursor: string | null) => {
    asked.push(cursor);
    const p = pages[cursor ?? ''];
    if (p === undefined) throw new Error(`no page ${cursor}`);
    return p;
  };
  return { read, asked };
}

describe('downloadAll', () => {
  test('txt: the pages joined as given, following the cursors', async () => {
    const r = reader({ '': { ok: true, text: 'a:1\nb:2\n', next: 'x' }, x: { ok: true, text: 'c:3\n', next: null } });
    expect(await downloadAll('txt', r.read)).toEqual({ ok: true, text: 'a:1\nb:2\nc:3\n', type: 'text/plain' });
    expect(r.asked).toEqual([null, 'x']);
  });

  test('csv: one header row', async () => {
    const r = reader({ '': { ok: true, text: 'h1,h2\r\n1,2\r\n', next: 'x' }, x: { ok: true, text: 'h1,h2\r\n3,4\r\n', next: null } });
    expect(await downloadAll('csv', r.read)).toEqual({ ok: true, text: 'h1,h2\r\n1,2\r\n3,4\r\n', type: 'text/csv' });
  });

  test('json: the proxies of every page in one document', async () => {
    const r = reader({ '': { ok: true, json: { proxies: [1, 2] }, next: 'x' }, x: { ok: true, json: { proxies: [3] }, next: null } });
    const got = await downloadAll('json', r.read);
    expect(got.ok && JSON.parse(got.text)).toEqual({ proxies: [1, 2, 3] });
    expect(got.ok && got.type).toBe('application/json');
  });

  test('a failed page ends it with that failure', async () => {
    const r = reader({ '': { ok: true, text: 'a\n', next: 'x' }, x: { ok: false, status: 401, body: { error: 'no' } } });
    expect(await downloadAll('txt', r.read)).toEqual({ ok: false, status: 401, body: { error: 'no' } });
  });

  test('a cursor that never ends stops at maxPages', async () => {
    let n = 0;
    const got = await downloadAll('txt', async () => ({ ok: true, text: `${n++}`, next: 'again' }), 3);
    expect(got).toEqual({ ok: true, text: '012', type: 'text/plain' });
  });

  test('csvWithoutHeader: a page with only a header (or none) adds nothing', () => {
    expect(csvWithoutHeader('h\r\n')).toBe('');
    expect(csvWithoutHeader('h')).toBe('');
    expect(csvWithoutHeader('h\r\nx\r\n')).toBe('x\r\n');
  });
});
