/** Incremental HTTP/1.x response parser: bytes in, verdicts out; split-invariant and throw-free under fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { HttpResponseParser, ResponseState, type ResponseParserOptions } from '../../src/probe/codec/http-response';

interface Summary {
  state: number;
  error: string | null;
  status: number;
  headers: [string, string][];
  body: string;
  truncated: boolean;
  rest: string | null;
}

/** Feeds `input` cut at `cuts` (sorted offsets), then EOF when `eof`. */
function run(input: Buffer, cuts: number[], opts: ResponseParserOptions, eof = true): Summary {
  const p = new HttpResponseParser(opts);
  let last = 0;
  for (const c of [...cuts, input.length]) {
    if (c < last) continue;
    p.push(input.subarray(last, c));
    last = c;
  }
  if (eof) p.end();
  return {
    state: p.state,
    error: p.error,
    status: p.statusCode,
    headers: p.headers,
    body: p.body().toString('latin1'),
    truncated: p.bodyTruncated,
    rest: p.rest === null ? null : p.rest.toString('latin1'),
  };
}

const OPTS: ResponseParserOptions = { bodyCap: 1 << 20 };
const b = (s: string): Buffer => Buffer.from(s, 'latin1');

/** Every single cut point and byte-by-byte give the same summary as one push. */
function expectSplitInvariant(input: Buffer, opts: ResponseParserOptions = OPTS, eof = true): Summary {
  const whole = run(input, [], opts, eof);
  for (let i = 0; i <= input.length; i++) expect(run(input, [i], opts, eof)).toEqual(whole);
  expect(run(input, Array.from({ length: input.length }, (_, i) => i), opts, eof)).toEqual(whole);
  return whole;
}

describe('HttpResponseParser examples', () => {
  test('Content-Length body', () => {
    const s = expectSplitInvariant(b('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello'), OPTS, false);
    expect(s).toEqual({
      state: ResponseState.DONE,
      error: null,
      status: 200,
      headers: [
        ['Content-Type', 'text/plain'],
        ['Content-Length', '5'],
      ],
      body: 'hello',
      truncated: false,
      rest: null,
    });
  });
  test('chunked body with extensions and trailers', () => {
    const s = expectSplitInvariant(
      b('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n'),
      OPTS,
      false,
    );
    expect(s.state).toBe(ResponseState.DONE);
    expect(s.body).toBe('hello world');
  });
  test('read to close, HTTP/1.0, no reason phrase, bare LF', () => {
    const s = expectSplitInvariant(b('HTTP/1.0 404\nServer: x\n\nnot here'));
    expect(s).toMatchObject({ state: ResponseState.DONE, status: 404, body: 'not here', headers: [['Server', 'x']] });
  });
  test('read to close without EOF stays in body state', () => {
    expect(run(b('HTTP/1.1 200 OK\r\n\r\nabc'), [], OPTS, false).state).toBe(ResponseState.BODY_CLOSE);
  });
  test('interim 100 Continue is skipped', () => {
    const s = expectSplitInvariant(b('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'), OPTS, false);
    expect(s).toMatchObject({ state: ResponseState.DONE, status: 200, body: 'ok' });
  });
  test('204 and 304 have no body', () => {
    expect(run(b('HTTP/1.1 204 No Content\r\n\r\n'), [], OPTS, false)).toMatchObject({ state: ResponseState.DONE, status: 204, body: '' });
    expect(run(b('HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n'), [], OPTS, false).state).toBe(ResponseState.DONE);
  });
  test('Content-Length 0 and identical repeated lengths', () => {
    expect(run(b('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), [], OPTS, false).state).toBe(ResponseState.DONE);
    expect(run(b('HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok'), [], OPTS, false).body).toBe('ok');
  });
  test('obs-fold continuation joins the previous value', () => {
    expect(run(b('HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\nContent-Length: 0\r\n\r\n'), [], OPTS, false).headers).toEqual([
      ['X-A', 'one two'],
      ['Content-Length', '0'],
    ]);
  });
  test('leading empty lines before the status line are tolerated', () => {
    expect(run(b('\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx'), [], OPTS, false).body).toBe('x');
  });
  test('headOnly keeps the bytes after the head in rest', () => {
    const s = expectSplitInvariant(b('HTTP/1.1 200 Connection established\r\n\r\n\x16\x03\x01'), { bodyCap: 0, headOnly: true }, false);
    expect(s).toMatchObject({ state: ResponseState.DONE, status: 200, rest: '\x16\x03\x01' });
    expect(run(b('HTTP/1.1 200 OK\r\n\r\n'), [], { bodyCap: 0, headOnly: true }, false).rest).toBeNull();
  });
  test('body cap truncates and finishes early', () => {
    const cap = { bodyCap: 4 };
    expect(expectSplitInvariant(b('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789'), cap, false)).toMatchObject({
      state: ResponseState.DONE,
      body: '0123',
      truncated: true,
    });
    expect(expectSplitInvariant(b('HTTP/1.1 200 OK\r\n\r\n0123456789'), cap, false)).toMatchObject({ body: '0123', truncated: true });
    expect(expectSplitInvariant(b('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n'), cap, false)).toMatchObject({
      body: 'abcd',
      truncated: true,
    });
    expect(run(b('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n0123'), [], cap, false)).toMatchObject({ body: '0123', truncated: false });
    expect(run(b('HTTP/1.1 200 OK\r\n\r\n0123'), [], cap, true)).toMatchObject({ state: ResponseState.DONE, truncated: false });
  });
  test.each([
    ['junk', 'garbage here\r\n\r\n', 'bad_status_line'],
    ['junk without newline', '\x80\x81\x82', 'bad_status_line'],
    ['HTTP/2 status line', 'HTTP/2 200\r\n\r\n', 'bad_status_line'],
    ['short status', 'HTTP/1.1 20 OK\r\n\r\n', 'bad_status_line'],
    ['header without colon', 'HTTP/1.1 200 OK\r\nnocolon\r\n\r\n', 'bad_header'],
    ['header with space in name', 'HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n', 'bad_header'],
    ['fold before any header', 'HTTP/1.1 200 OK\r\n folded\r\n\r\n', 'bad_header'],
    ['conflicting lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 'bad_framing'],
    ['negative length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', 'bad_framing'],
    ['bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'bad_chunk'],
    ['missing CRLF after chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n', 'bad_chunk'],
  ])('error: %s', (_name, input, code) => {
    const s = expectSplitInvariant(b(input), OPTS, false);
    expect(s.state).toBe(ResponseState.ERROR);
    expect(s.error).toBe(code);
  });
  test('EOF errors: empty and truncated', () => {
    expect(run(b(''), [], OPTS, true).error).toBe('empty');
    expect(expectSplitInvariant(b('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel')).error).toBe('truncated');
    expect(expectSplitInvariant(b('HTTP/1.1 200 OK\r\nX')).error).toBe('truncated');
  });
  test('head too large', () => {
    const s = run(b('HTTP/1.1 200 OK\r\nX: ' + 'a'.repeat(200) + '\r\n\r\n'), [], { bodyCap: 10, headMax: 100 }, false);
    expect(s.error).toBe('head_too_large');
  });
  test('pushing after DONE changes nothing', () => {
    const p = new HttpResponseParser(OPTS);
    p.push(b('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx'));
    p.push(b('HTTP/1.1 500 NO\r\n\r\n'));
    expect(p.state).toBe(ResponseState.DONE);
    expect(p.statusCode).toBe(200);
    expect(p.body().toString()).toBe('x');
    expect(p.header('content-length')).toBe('1');
  });
});

/** Generator of well-formed responses with every framing. */
const tokenArb = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/).filter((s) => !/^(content-length|transfer-encoding)$/i.test(s));
const responseArb = fc
  .record({
    status: fc.integer({ min: 200, max: 599 }).filter((s) => s !== 204 && s !== 304),
    headers: fc.array(fc.tuple(tokenArb, fc.stringMatching(/^[ -~]{0,20}$/)), { maxLength: 5 }),
    body: fc.uint8Array({ maxLength: 300 }),
    framing: fc.constantFrom('length', 'chunked', 'close'),
    chunkSize: fc.integer({ min: 1, max: 64 }),
    lf: fc.boolean(),
  })
  .map(({ status, headers, body, framing, chunkSize, lf }) => {
    const nl = lf ? '\n' : '\r\n';
    let head = `HTTP/1.1 ${status} Reason${nl}`;
    for (const [n, v] of headers) head += `${n}: ${v.trim()}${nl}`;
    const bodyBuf = Buffer.from(body);
    if (framing === 'length') return Buffer.concat([b(`${head}Content-Length: ${body.length}${nl}${nl}`), bodyBuf]);
    if (framing === 'close') return Buffer.concat([b(`${head}${nl}`), bodyBuf]);
    const parts: Buffer[] = [b(`${head}Transfer-Encoding: chunked${nl}${nl}`)];
    for (let i = 0; i < bodyBuf.length; i += chunkSize) {
      const c = bodyBuf.subarray(i, i + chunkSize);
      parts.push(b(`${c.length.toString(16)}${nl}`), c, b(nl));
    }
    parts.push(b(`0${nl}${nl}`));
    return Buffer.concat(parts);
  });

const cutsArb = (max: number) => fc.uniqueArray(fc.integer({ min: 0, max }), { maxLength: 12 }).map((a) => a.sort((x, y) => x - y));

describe('HttpResponseParser fuzzing', () => {
  test('well-formed responses parse to DONE with the same result for any split', () => {
    fc.assert(
      fc.property(responseArb, fc.integer({ min: 0, max: 400 }), (input, cap) => {
        const opts = { bodyCap: cap };
        const whole = run(input, [], opts);
        expect(whole.state).toBe(ResponseState.DONE);
        expect(whole.error).toBeNull();
        for (let i = 0; i <= input.length; i++) expect(run(input, [i], opts)).toEqual(whole);
      }),
      { numRuns: 150 },
    );
  });
  test('random bytes never throw and give the same result for any split', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), responseArb.map((r) => r.subarray(0, Math.floor(r.length / 2)))),
        fc.boolean(),
        fc.integer({ min: 0, max: 50 }),
        (input, eof, cap) => {
          const opts = { bodyCap: cap, headMax: 128 };
          const whole = run(input, [], opts, eof);
          fc.assert(
            fc.property(cutsArb(input.length), (cuts) => {
              expect(run(input, cuts, opts, eof)).toEqual(whole);
            }),
            { numRuns: 5 },
          );
        },
      ),
      { numRuns: 300 },
    );
  });
  test('mutated responses never throw and stay split-invariant at every byte', () => {
    fc.assert(
      fc.property(responseArb, fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 255 }), (input, at, byte) => {
        const m = Buffer.from(input);
        if (m.length > 0) m[at % m.length] = byte;
        const whole = run(m, [], OPTS);
        for (let i = 0; i <= m.length; i++) expect(run(m, [i], OPTS)).toEqual(whole);
      }),
      { numRuns: 100 },
    );
  });
});

describe('onBody: the body handed over as it arrives', () => {
  const head = 'HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n';
  test('every body byte reaches onBody once, nothing is kept, any split', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }), (cuts) => {
        const bytes = Buffer.from(head + 'hello world!');
        const got: Buffer[] = [];
        const p = new HttpResponseParser({ bodyCap: 1024, onBody: (c) => (got.push(Buffer.from(c)), false) });
        let at = 0;
        for (const c of cuts) {
          if (at >= bytes.length) break;
          p.push(bytes.subarray(at, at + c));
          at += c;
        }
        if (at < bytes.length) p.push(bytes.subarray(at));
        expect(p.state).toBe(ResponseState.DONE);
        expect(Buffer.concat(got).toString()).toBe('hello world!');
        expect(p.body().length).toBe(0);
        expect(p.bodyStopped).toBe(false);
      }),
    );
  });

  test('true ends the message at once (bodyStopped), also in a chunked body', () => {
    const p = new HttpResponseParser({ bodyCap: 1024, onBody: (c) => c.includes('stop') });
    expect(p.push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n4\r\nstop\r\n'))).toBe(ResponseState.DONE);
    expect(p.bodyStopped).toBe(true);
    expect(p.statusCode).toBe(200);
  });

  test('the cap still bounds what is handed over', () => {
    let n = 0;
    const p = new HttpResponseParser({ bodyCap: 5, onBody: (c) => ((n += c.length), false) });
    p.push(Buffer.from(head + 'hello world!'));
    expect(n).toBe(5);
    expect(p.bodyTruncated).toBe(true);
  });
});
