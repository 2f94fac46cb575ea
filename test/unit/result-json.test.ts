/**
 * Tests for src/results/result-json.ts, the encoding side (the decoding side,
 * readResultParts, is tested in export.test.ts with split bytes): the exact
 * bytes of head, separators and tail, a streamed custom-URL block equal to a
 * plain one, and encode -> decode giving the same parts back.
 */
import { describe, expect, test } from 'bun:test';
import type { ProxyRecord } from '../../src/results/record';
import {
  headInfo,
  headProxyType,
  headText,
  isChunkSource,
  readResultParts,
  RECORD_SEPARATOR,
  recordPrefix,
  recordsEnd,
  tailPieces,
  type ResultPart,
} from '../../src/results/result-json';

const rec = (port: number, status: 'working' | 'failed'): ProxyRecord =>
  ({ proxy: { host: '192.0.2.1', port, hasAuth: false }, status, responseTime: '1.00 ms', location: 'Zürich' }) as unknown as ProxyRecord;

/** A whole document from the encoder's pieces. */
function encode(summary: unknown, metadata: unknown, records: ProxyRecord[], cuv?: unknown): string {
  return headText(summary, metadata) + records.map((r, i) => recordPrefix(i) + JSON.stringify(r)).join('') + [...tailPieces(records.length, { custom_url_validation: cuv })].join('');
}

async function collect(gen: AsyncIterable<ResultPart>): Promise<ResultPart[]> {
  const out: ResultPart[] = [];
  for await (const p of gen) out.push(p);
  return out;
}

describe('encoding', () => {
  test('exact bytes: head, separators, tail', () => {
    expect(headText({ a: 1 }, undefined)).toBe('{"summary":{"a":1},"metadata":null,"proxies":[');
    expect(RECORD_SEPARATOR).toBe(',\n');
    expect([recordPrefix(0), recordPrefix(1), recordPrefix(7)]).toEqual(['\n', ',\n', ',\n']);
    expect([recordsEnd(0), recordsEnd(3)]).toEqual(['', '\n']);
    expect([...tailPieces(0, undefined)].join('')).toBe(']}\n');
    expect([...tailPieces(2, undefined)].join('')).toBe('\n]}\n');
    expect([...tailPieces(1, { custom_url_validation: { x: [1] } })].join('')).toBe('\n],"custom_url_validation":{"x":[1]}}\n');
    expect(encode({}, {}, [rec(1, 'working'), rec(2, 'failed')])).toBe(
      `{"summary":{},"metadata":{},"proxies":[\n${JSON.stringify(rec(1, 'working'))},\n${JSON.stringify(rec(2, 'failed'))}\n]}\n`,
    );
  });

  test('a chunk source is streamed piece by piece and equals the plain value', () => {
    const value = { per_url_summary: [{ url: 'https://a.example/', ok: 3 }] };
    const pieces = ['{"per_url_summary":[', '{"url":"https://a.example/",', '"ok":3}', ']}'];
    const source = { toJsonChunks: () => pieces };
    expect(isChunkSource(source)).toBe(true);
    expect(isChunkSource(value)).toBe(false);
    expect(isChunkSource(null)).toBe(false);
    const streamed = [...tailPieces(0, { custom_url_validation: source })];
    expect(streamed).toEqual([']', ',"custom_url_validation":', ...pieces, '}\n']);
    expect(streamed.join('')).toBe([...tailPieces(0, { custom_url_validation: value })].join(''));
  });

  test('every encoded document is valid JSON and decodes to the same parts it was made of', async () => {
    const records = [rec(1, 'working'), rec(2, 'working'), rec(3, 'failed')];
    for (const [rs, cuv] of [[records, undefined], [records, { s: 1 }], [[], undefined], [[], { s: 'é' }]] as const) {
      const text = encode({ total: rs.length }, { job: 'j' }, [...rs], cuv);
      const doc = JSON.parse(text);
      expect(doc.proxies).toEqual(rs);
      if (cuv !== undefined) expect(doc.custom_url_validation).toEqual(cuv);
      const parts = await collect(readResultParts([new TextEncoder().encode(text)]));
      expect(parts.filter((p) => p.kind === 'record').map((p) => (p as { record: ProxyRecord }).record)).toEqual([...rs]);
      expect(parts[0]).toEqual({ kind: 'head', text: headText({ total: rs.length }, { job: 'j' }) });
      expect(parts.at(-1)!.kind).toBe('tail');
    }
  });
});

describe('headInfo', () => {
  test('sampled when the summary has a numeric rotating (only checks with samples > 1 have it)', () => {
    expect(headInfo(headText({ total_working: 0, rotating: 0 }, { proxy_type: 'http' }))).toEqual({ proxyType: 'http', sampled: true, https: false });
    expect(headInfo(headText({ total_working: 0, protocols: {}, rotating: 3 }, { proxy_type: 'auto' }))).toEqual({ proxyType: 'auto', sampled: true, https: false });
    expect(headInfo(headText({ total_working: 0 }, { proxy_type: 'http' }))).toEqual({ proxyType: 'http', sampled: false, https: false });
    expect(headInfo(headText({ rotating: '1' }, null))).toEqual({ proxyType: null, sampled: false, https: false });
    expect(headInfo(headText(null, null))).toEqual({ proxyType: null, sampled: false, https: false });
    expect(headInfo('{"summary":{,"proxies":[')).toEqual({ proxyType: null, sampled: false, https: false });
  });

  test('https when the summary has a numeric https (a check with a TLS judge and a working proxy)', () => {
    expect(headInfo(headText({ total_working: 1, https: 1 }, { proxy_type: 'http' }))).toEqual({ proxyType: 'http', sampled: false, https: true });
    expect(headInfo(headText({ total_working: 1, rotating: 1, https: 0 }, { proxy_type: 'auto' }))).toEqual({ proxyType: 'auto', sampled: true, https: true });
    expect(headInfo(headText({ https: true }, null)).https).toBe(false);
  });
});

describe('headProxyType', () => {
  test('metadata.proxy_type of a head, null when absent, not a string or not a head', () => {
    expect(headProxyType(headText({ total_working: 0 }, { proxy_type: 'auto', job_id: 'x' }))).toBe('auto');
    expect(headProxyType(headText({}, { proxy_type: 'socks5' }))).toBe('socks5');
    expect(headProxyType(headText({}, { job_id: 'x' }))).toBeNull();
    expect(headProxyType(headText({}, null))).toBeNull();
    expect(headProxyType(headText({}, { proxy_type: 5 }))).toBeNull();
    expect(headProxyType('{"summary":')).toBeNull();
    expect(headProxyType('{"summary":{,"proxies":[')).toBeNull();
  });
});
