/**
 * Tests for src/results/export.ts: CSV cells/rows (RFC 4180 quoting, formula
 * guard), TXT lines in the submitted form, the line-by-line result-file
 * reader (fed split at every byte boundary), the converters and resultUrls.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors';
import { parseProxyLine } from '../../src/proxy/parse';
import {
  CSV_AUTO_COLUMNS,
  CSV_COLUMNS,
  CSV_HEADER,
  CSV_HEADER_AUTO,
  CSV_SAMPLE_COLUMNS,
  csvCell,
  csvHeader,
  csvRow,
  csvRowAuto,
  CSV_HTTPS_COLUMN,
  csvRowOf,
  readResultParts,
  resultUrls,
  responseTimeMs,
  toCsv,
  toJson,
  toTxt,
  convertResult,
  txtLine,
} from '../../src/results/export';
import type { ProxyRecord } from '../../src/results/record';

const working = (over: Partial<ProxyRecord> = {}, proxy: Partial<ProxyRecord['proxy']> = {}): ProxyRecord => ({
  proxy: { host: '198.51.100.1', port: 8080, hasAuth: false, format: 'standard', ...proxy },
  status: 'working',
  statusCode: 200,
  responseTime: '123.46 ms',
  anonymity: 'elite',
  origin: '198.51.100.1',
  country: 'CH',
  country_name: 'Switzerland',
  location: 'Zürich',
  isp: 'Example, "AG"',
  asn: 64500,
  coordinates: { lat: 47.37, lon: -8.54 },
  ...over,
});

const failed = (port: number, proxy: Partial<ProxyRecord['proxy']> = {}): ProxyRecord => ({
  proxy: { host: '127.0.0.1', port, hasAuth: false, format: 'standard', ...proxy },
  status: 'failed',
  statusCode: null,
  responseTime: '3.10 ms',
  anonymity: null,
  origin: null,
  country: null,
  country_name: null,
  location: null,
  isp: null,
  asn: null,
  coordinates: null,
  error: { code: 'connect_refused', message: 'connection refused, "ECONNREFUSED"' },
});

/** A result file exactly as src/results/writer.ts lays it out. */
function fileText(records: ProxyRecord[], cuv?: unknown): string {
  const head = `{"summary":${JSON.stringify({ total_working: 1, countries: { 東京: 1 } })},"metadata":${JSON.stringify({ job_id: 'j' })},"proxies":[`;
  const body = records.length > 0 ? `\n${records.map((r) => JSON.stringify(r)).join(',\n')}\n]` : ']';
  const tail = cuv === undefined ? '' : `,"custom_url_validation":${JSON.stringify(cuv)}`;
  return `${head}${body}${tail}}\n`;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
const join = async (it: AsyncIterable<string>) => (await collect(it)).join('');
const bytes = (s: string) => new TextEncoder().encode(s);
function* splitAt(b: Uint8Array, cuts: number[]): Generator<Uint8Array> {
  let prev = 0;
  for (const c of [...cuts].sort((x, y) => x - y)) {
    yield b.subarray(prev, c);
    prev = c;
  }
  yield b.subarray(prev);
}

describe('csvCell', () => {
  test('plain, quoted, doubled quotes, empty', () => {
    expect(csvCell('abc')).toBe('abc');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('cr\rx')).toBe('"cr\rx"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(Number.NaN)).toBe('');
  });

  test('formula guard on text cells, not on numbers', () => {
    for (const s of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(csvCell(s).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell(-8.54)).toBe('-8.54');
    expect(csvCell('-8.54', false)).toBe('-8.54');
    expect(csvCell('a=b')).toBe('a=b');
  });

  test('property: a guarded, quoted cell reads back as the guarded text', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const cell = csvCell(s);
        const unquoted = cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell;
        const expected = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
        expect(unquoted).toBe(expected);
        if (!cell.startsWith('"')) expect(/[",\r\n]/.test(cell)).toBe(false);
      }),
    );
  });
});

describe('csvRow', () => {
  test('header has the 19 columns', () => {
    expect(CSV_COLUMNS).toHaveLength(19);
    expect(CSV_HEADER).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  test('working record with auth: every field flattened', () => {
    const r = working({}, { hasAuth: true, username: '=cmd', password: 'p,w', format: 'url_auth' });
    expect(csvRow(r)).toBe(
      `198.51.100.1,8080,true,'=cmd,"p,w",working,200,123.46,elite,198.51.100.1,CH,Switzerland,Zürich,"Example, ""AG""",64500,47.37,-8.54,,\r\n`,
    );
  });

  test('failed record: empty cells for nulls, error code and message', () => {
    expect(csvRow(failed(9))).toBe(`127.0.0.1,9,false,,,failed,,3.1,,,,,,,,,,connect_refused,"connection refused, ""ECONNREFUSED"""\r\n`);
  });

  test('responseTimeMs', () => {
    expect(responseTimeMs('12.30 ms')).toBe(12.3);
    expect(responseTimeMs('x')).toBeNull();
    expect(responseTimeMs(null)).toBeNull();
  });
});

describe('txtLine', () => {
  test('submitted forms', () => {
    expect(txtLine(working())).toBe('198.51.100.1:8080');
    expect(txtLine(working({}, { hasAuth: true, username: 'u', password: 'p:w@', format: 'url_auth' }))).toBe('u:p%3Aw%40@198.51.100.1:8080');
    expect(txtLine(working({}, { hasAuth: true, username: 'u', password: 'p:w@', format: 'colon_auth' }))).toBe('198.51.100.1:8080:u:p:w@');
    expect(txtLine(working({}, { host: '2001:db8::1', format: 'standard' }))).toBe('[2001:db8::1]:8080');
  });

  test('no format (older files): url form with credentials, else standard', () => {
    expect(txtLine(working({}, { format: undefined }))).toBe('198.51.100.1:8080');
    expect(txtLine(working({}, { format: undefined, hasAuth: true, username: 'a', password: 'b' }))).toBe('a:b@198.51.100.1:8080');
  });

  test('property: every line parses back to the same proxy', () => {
    const cred = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s) && s.isWellFormed());
    fc.assert(
      fc.property(cred, fc.string({ maxLength: 12 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s) && s.isWellFormed()), fc.constantFrom('url_auth', 'colon_auth', 'standard'), fc.integer({ min: 1, max: 65535 }), (u, p, format, port) => {
        const line = txtLine(working({}, { port, hasAuth: true, username: u, password: p, format: format as 'url_auth' }));
        const back = parseProxyLine(line);
        expect(back).not.toBeNull();
        expect([back!.host, back!.port, back!.username, back!.password]).toEqual(['198.51.100.1', port, u, p]);
      }),
    );
  });
});

describe('readResultParts', () => {
  const records = [working(), working({ responseTime: '200.00 ms' }, { port: 8081 }), failed(9), failed(10)];
  const cuv = { summary: { total_urls_tested: 1 }, per_url_summary: [] };

  test('head, records in order, tail', async () => {
    const parts = await collect(readResultParts([fileText(records, cuv)]));
    expect(parts.map((p) => p.kind)).toEqual(['head', 'record', 'record', 'record', 'record', 'tail']);
    expect(parts.filter((p) => p.kind === 'record').map((p) => (p as { record: ProxyRecord }).record)).toEqual(records);
    const text = parts.map((p) => p.text).join('|');
    expect(text.startsWith('{"summary":')).toBe(true);
    expect(parts.at(-1)!.text).toBe(`],"custom_url_validation":${JSON.stringify(cuv)}}`);
  });

  test('no proxies (one line): parsed whole, same parts', async () => {
    const parts = await collect(readResultParts([fileText([], cuv)]));
    expect(parts.map((p) => p.kind)).toEqual(['head', 'tail']);
    expect(JSON.parse(`${parts[0]!.text}${parts[1]!.text}`)).toEqual(JSON.parse(fileText([], cuv)));
  });

  test('a pretty-printed file from elsewhere is parsed whole', async () => {
    const doc = { summary: {}, proxies: records, extra: 1 };
    const parts = await collect(readResultParts([JSON.stringify(doc, null, 2)]));
    expect(parts.filter((p) => p.kind === 'record')).toHaveLength(4);
    expect(parts.at(-1)!.text).toBe(']'.concat(',"extra":1}'));
  });

  test('split at every byte boundary (multi-byte UTF-8 included) gives the same parts', async () => {
    const b = bytes(fileText(records.slice(0, 3)));
    const whole = await collect(readResultParts([b]));
    for (let i = 0; i <= b.length; i++) {
      expect(await collect(readResultParts(splitAt(b, [i])))).toEqual(whole);
    }
  });

  test('property: any split into many pieces gives the same parts', async () => {
    const b = bytes(fileText(records, cuv));
    const whole = await collect(readResultParts([b]));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: b.length }), { maxLength: 40 }), async (cuts) => {
        expect(await collect(readResultParts(splitAt(b, cuts)))).toEqual(whole);
      }),
      { numRuns: 60 },
    );
  });

  test('truncated or corrupt files are ServiceErrors with a code', async () => {
    const text = fileText(records);
    const cut = text.slice(0, text.indexOf('\n', text.indexOf('\n') + 1) + 1);
    await expect(collect(readResultParts([cut]))).rejects.toMatchObject({ code: 'export_truncated' });
    await expect(collect(readResultParts([text.replace('"status":"failed"', '"status":"failed"}{')]))).rejects.toBeInstanceOf(ServiceError);
    await expect(collect(readResultParts([text.replace('"status":"failed"', '"status":"failed"}{')]))).rejects.toMatchObject({ code: 'export_bad_record' });
    await expect(collect(readResultParts(['not json']))).rejects.toMatchObject({ code: 'export_bad_file' });
    await expect(collect(readResultParts([bytes('{"a":"\u00e9"}').subarray(0, 7)]))).rejects.toBeDefined();
  });
});

describe('converters', () => {
  const records = [working({}, { hasAuth: true, username: 'u', password: 'p', format: 'colon_auth' }), working({}, { port: 3128 }), failed(9)];
  const text = fileText(records, { summary: {} });

  test('toCsv: header plus one row per proxy; onlyWorking drops failed', async () => {
    const csv = await join(toCsv([text]));
    expect(csv).toBe(CSV_HEADER + records.map(csvRow).join(''));
    const csvW = await join(toCsv([text], { onlyWorking: true }));
    expect(csvW.split('\r\n').filter(Boolean)).toHaveLength(3);
  });

  test('toCsv of an auto check (metadata.proxy_type "auto"): type and protocols columns at the end; other files keep CSV_COLUMNS', async () => {
    const auto = [
      working({ type: 'socks5', protocols: ['socks5', 'socks4'] }),
      working({ type: 'http', protocols: ['http'] }, { port: 3128 }),
      { ...failed(9), type: null, protocols: [] },
    ];
    const autoText = fileText(auto).replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"auto"}');
    const csv = await join(toCsv([autoText]));
    expect(CSV_HEADER_AUTO).toBe(`${[...CSV_COLUMNS, ...CSV_AUTO_COLUMNS].join(',')}\r\n`);
    expect(csv).toBe(CSV_HEADER_AUTO + auto.map((r) => csvRowAuto(r)).join(''));
    const rows = csv.split('\r\n');
    expect(rows[1]!.endsWith(',socks5,socks5 socks4')).toBe(true);
    expect(rows[2]!.endsWith(',http,http')).toBe(true);
    expect(rows[3]!.endsWith(',,')).toBe(true);
    expect(csvRowAuto(auto[0]!).startsWith(csvRow(auto[0]!).slice(0, -2))).toBe(true);
    // the same records in a file of another type: the stable columns only
    const plain = fileText(auto).replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"socks5"}');
    expect(await join(toCsv([plain]))).toBe(CSV_HEADER + auto.map((r) => csvRow(r)).join(''));
    // onlyWorking still stops at the first failed record
    expect((await join(toCsv([autoText], { onlyWorking: true }))).split('\r\n').filter(Boolean)).toHaveLength(3);
  });

  test('toCsv of a sampled check (the summary has rotating): the samples columns at the end, after those of auto', async () => {
    const block = { count: 3, succeeded: 2, success_rate: '66.67%', exit_ips: ['127.0.0.2', '127.0.0.3'], unique_exit_ips: 2, response_time_ms: { min: 1.5, p50: 1.5, max: 9.25 } };
    const sampled = [working({ samples: block }), { ...failed(9), samples: { ...block, succeeded: 0, success_rate: '0.00%', exit_ips: [], unique_exit_ips: 0, response_time_ms: null } }];
    const sampledText = fileText(sampled).replace('"summary":{', '"summary":{"rotating":1,');
    const rows = (await join(toCsv([sampledText]))).split('\r\n');
    expect(rows[0]).toBe([...CSV_COLUMNS, ...CSV_SAMPLE_COLUMNS].join(','));
    expect(rows[1]!.endsWith(',3,2,66.67%,127.0.0.2 127.0.0.3,2,1.5,1.5,9.25')).toBe(true);
    expect(rows[1]!.startsWith(csvRow(sampled[0]!).slice(0, -2))).toBe(true);
    expect(rows[2]!.endsWith(',3,0,0.00%,,0,,,')).toBe(true);
    // auto and sampled: the auto columns, then the samples columns
    const both = sampledText.replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"auto"}');
    const head = (await join(toCsv([both]))).split('\r\n')[0];
    expect(head).toBe([...CSV_COLUMNS, ...CSV_AUTO_COLUMNS, ...CSV_SAMPLE_COLUMNS].join(','));
    // the same records in a file without rotating in its summary: the stable columns only
    expect(await join(toCsv([fileText(sampled)]))).toBe(CSV_HEADER + sampled.map((r) => csvRow(r)).join(''));
    expect(csvHeader({ auto: false, sampled: false })).toBe(CSV_HEADER);
    expect(csvHeader({ auto: true, sampled: false })).toBe(CSV_HEADER_AUTO);
  });

  test('toCsv of a check with a TLS judge (summary.https): an https column at the very end; without it, none', async () => {
    const recs = [working({ https: true }), working({ https: false }, { port: 3128 }), failed(9)];
    const withHttps = fileText(recs).replace('"summary":{', '"summary":{"https":1,');
    const csv = await join(toCsv([withHttps]));
    const rows = csv.split('\r\n');
    expect(rows[0]).toBe([...CSV_COLUMNS, CSV_HTTPS_COLUMN].join(','));
    expect(rows[1]!.endsWith(',true')).toBe(true);
    expect(rows[2]!.endsWith(',false')).toBe(true);
    expect(rows[3]!.endsWith(',')).toBe(true);
    expect(rows[1]!.slice(0, -',true'.length)).toBe(csvRow(recs[0]!).slice(0, -2));
    // auto + https: the auto columns, then https
    const autoHttps = withHttps.replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"auto"}');
    expect((await join(toCsv([autoHttps]))).split('\r\n')[0]).toBe([...CSV_COLUMNS, ...CSV_AUTO_COLUMNS, CSV_HTTPS_COLUMN].join(','));
    expect(csvRowOf({ ...recs[0]!, type: 'http', protocols: ['http'] }, { auto: true, sampled: false, https: true }).endsWith(',http,http,true\r\n')).toBe(true);
    // auto + sampled + https: auto, then samples, then https
    expect(csvHeader({ auto: true, sampled: true, https: true })).toBe(`${[...CSV_COLUMNS, ...CSV_AUTO_COLUMNS, ...CSV_SAMPLE_COLUMNS, CSV_HTTPS_COLUMN].join(',')}\r\n`);
    // the same records in a file whose summary has no https: the stable columns only
    expect(await join(toCsv([fileText(recs)]))).toBe(CSV_HEADER + recs.map((r) => csvRow(r)).join(''));
  });

  test('toTxt: working proxies in their submitted form, stops at the first failed', async () => {
    expect(await join(toTxt([text]))).toBe('198.51.100.1:8080:u:p\n198.51.100.1:3128\n');
    // records after the first failed one are not read: a corrupt line there does not matter
    const tail = `${fileText(records).replace(/\n\]\}\n$/, '')},\n{corrupt\n]}\n`;
    expect(await join(toTxt([tail]))).toBe('198.51.100.1:8080:u:p\n198.51.100.1:3128\n');
  });

  test('toTxt with scheme (DECISIONS "Mixed lists"): <protocol>:// from the record type, else the check type; URL form', async () => {
    const mixed = [
      working({ type: 'socks5' }, { hasAuth: true, username: 'u', password: 'p:w', format: 'colon_auth' }),
      working({ type: 'http' }, { port: 3128 }),
      working({}, { port: 3129 }),
      { ...failed(9), type: 'socks4' as const },
    ];
    const withType = fileText(mixed).replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"socks4"}');
    expect(await join(toTxt([withType], { scheme: true }))).toBe('socks5://u:p%3Aw@198.51.100.1:8080\nhttp://198.51.100.1:3128\nsocks4://198.51.100.1:3129\n');
    // no check type in the head: a record without its own keeps its plain line
    expect(await join(toTxt([fileText(mixed)], { scheme: true }))).toBe('socks5://u:p%3Aw@198.51.100.1:8080\nhttp://198.51.100.1:3128\n198.51.100.1:3129\n');
    // an auto check's head type names no protocol: each record's own
    const auto = fileText(mixed.slice(0, 2)).replace('"metadata":{"job_id":"j"}', '"metadata":{"job_id":"j","proxy_type":"auto"}');
    expect(await join(toTxt([auto], { scheme: true }))).toBe('socks5://u:p%3Aw@198.51.100.1:8080\nhttp://198.51.100.1:3128\n');
    // without scheme: as ever
    expect(await join(toTxt([withType]))).toBe('198.51.100.1:8080:u:p:w\n198.51.100.1:3128\n198.51.100.1:3129\n');
    expect(await join(convertResult('txt', [withType], { scheme: true }))).toContain('socks5://');
  });

  test('toJson: identical document; onlyWorking keeps head and tail', async () => {
    expect(JSON.parse(await join(toJson([text])))).toEqual(JSON.parse(text));
    expect(await join(toJson([text]))).toBe(text);
    const w = JSON.parse(await join(toJson([text], { onlyWorking: true })));
    expect(w.proxies).toEqual(records.slice(0, 2));
    expect(w.custom_url_validation).toEqual({ summary: {} });
    const none = JSON.parse(await join(toJson([fileText([failed(1)])], { onlyWorking: true })));
    expect(none.proxies).toEqual([]);
  });

  test('batches large outputs', async () => {
    const many = Array.from({ length: 2000 }, (_, i) => working({}, { port: 1 + i }));
    const chunks = await collect(toCsv([fileText(many)]));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('').split('\r\n').filter(Boolean)).toHaveLength(2001);
  });
});

describe('resultUrls', () => {
  test('same token and expiry, other extensions', () => {
    expect(resultUrls('http://h:1/result/abc.json?token=t&expires=9')).toEqual({
      json: 'http://h:1/result/abc.json?token=t&expires=9',
      csv: 'http://h:1/result/abc.csv?token=t&expires=9',
      txt: 'http://h:1/result/abc.txt?token=t&expires=9',
    });
    expect(resultUrls('http://x/result/id.json')).toEqual({ json: 'http://x/result/id.json', csv: 'http://x/result/id.csv', txt: 'http://x/result/id.txt' });
    expect(resultUrls('http://x/other')).toBeNull();
  });
});
