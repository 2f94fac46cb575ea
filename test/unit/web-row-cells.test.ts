/** Tests for src/web/client/row-cells.ts: the results table's markup with and without the optional columns. */
import { describe, expect, test } from 'bun:test';
import { columnCount, ERROR_MESSAGE_CHARS, errorCell, integrityCell, rotationCell, rowHtml, tableBodyHtml } from '../../src/web/client/row-cells';
import { toRow, type ExtraColumns, type ResultRecord } from '../../src/web/client/table';

const none: ExtraColumns = { protocols: false, https: false, integrity: false, rotation: false };
const all: ExtraColumns = { protocols: true, https: true, integrity: true, rotation: true };
const base: ResultRecord = { proxy: { host: '10.0.0.1', port: 8080 }, status: 'working', responseTime: '12.40 ms', anonymity: 'elite', origin: '10.0.0.9' };
const cells = (html: string) => [...html.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));

describe('rowHtml', () => {
  test('a plain row: the nine columns as before', () => {
    const html = rowHtml(toRow(base), none);
    expect(cells(html)).toEqual(['10.0.0.1:8080', 'working', '12 ms', 'elite', '—', '—', '—', '10.0.0.9', '—']);
    expect(columnCount(none)).toBe(9);
  });

  test('every optional column in the header order: integrity, protocols, https, exits right after the status', () => {
    const r = toRow({ ...base, protocols: ['socks5', 'http'], https: true, samples: { count: 3, succeeded: 3, unique_exit_ips: 2 } });
    expect(cells(rowHtml(r, all))).toEqual(['10.0.0.1:8080', 'working', '—', 'socks5 http', 'yes', '2 / 3 rotating', '12 ms', 'elite', '—', '—', '—', '10.0.0.9', '—']);
    expect(columnCount(all)).toBe(13);
  });

  test('a liar: its code highlighted in the integrity column with the message as a title; values escaped', () => {
    const r = toRow({ ...base, status: 'failed', anonymity: null, origin: null, protocols: [], error: { code: 'tampered', message: 'bytes injected: <script>' } });
    const html = integrityCell(r);
    expect(html).toBe('<td><span class="badge lie" title="bytes injected: &lt;script&gt;">tampered</span></td>');
    expect(rowHtml(r, all)).toContain('<td class="muted">none</td>');
    expect(integrityCell(toRow({ ...base, status: 'failed', error: { code: 'timeout', message: '' } }))).toBe('<td class="muted">—</td>');
  });

  test('the error column: the code and its message, cut when long (all of it in the title); escaped', () => {
    const failed = (code: string, message: string) => toRow({ ...base, status: 'failed', anonymity: null, origin: null, error: { code, message } });
    expect(errorCell(failed('connect_refused', 'connection refused'))).toBe(
      '<td class="err" title="connect_refused: connection refused"><code>connect_refused</code> <span class="err-msg">connection refused</span></td>',
    );
    expect(cells(rowHtml(failed('timeout', 'no answer <in> 1000 ms'), none)).at(-1)).toBe('timeout no answer &lt;in&gt; 1000 ms');
    const long = 'x'.repeat(ERROR_MESSAGE_CHARS + 20);
    const html = errorCell(failed('tampered', long));
    expect(html).toContain(`title="tampered: ${long}"`);
    expect(html).toContain(`<span class="err-msg">${'x'.repeat(ERROR_MESSAGE_CHARS - 1)}…</span>`);
    expect(errorCell(failed('timeout', ''))).toBe('<td class="err" title="timeout"><code>timeout</code></td>');
    expect(errorCell(toRow(base))).toBe('<td class="muted">—</td>');
  });

  test('rotation: exits / samples, a badge only when more than one exit, the passed samples in the title', () => {
    expect(rotationCell(toRow({ ...base, samples: { count: 5, succeeded: 4, unique_exit_ips: 1 } }))).toBe(
      '<td class="num" title="4 of 5 samples passed; 1 distinct exit address">1 / 5</td>',
    );
    expect(rotationCell(toRow(base))).toBe('<td class="muted">—</td>');
  });

  test('the empty table spans every visible column', () => {
    expect(tableBodyHtml([], none)).toContain('colspan="9"');
    expect(tableBodyHtml([], all)).toContain('colspan="13"');
    expect(tableBodyHtml([toRow(base), toRow(base)], none).match(/<tr>/g)).toHaveLength(2);
  });
});
