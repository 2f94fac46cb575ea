/** Judge body: render/read round trip, nonce checks, garbage tolerance, nonce extraction. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { extractNonce, readJudgeBody, renderJudgeBody } from '../../src/probe/codec/judge-body';

const ECHO = {
  requestLine: 'GET /judge?n=abc123 HTTP/1.1',
  headers: [
    ['Host', '127.0.0.1:3000'],
    ['Via', '1.1 "quoted" \\ proxy'],
  ] as [string, string][],
  remoteAddress: '203.0.113.7',
  nonce: 'abc123',
};

describe('renderJudgeBody / readJudgeBody', () => {
  test('round trip with the right nonce', () => {
    const body = renderJudgeBody(ECHO);
    expect(readJudgeBody(body, 'abc123')).toEqual({
      ok: true,
      headers: ECHO.headers,
      remoteAddress: '203.0.113.7',
      requestLine: ECHO.requestLine,
    });
    expect(readJudgeBody(Buffer.from(body), 'abc123').ok).toBe(true);
  });
  test('wrong, empty, prefix and absent nonces are not ok', () => {
    const body = renderJudgeBody(ECHO);
    expect(readJudgeBody(body, 'abc124')).toEqual({ ok: false });
    expect(readJudgeBody(body, '')).toEqual({ ok: false });
    expect(readJudgeBody(body, 'abc12')).toEqual({ ok: false });
    expect(readJudgeBody(renderJudgeBody({ ...ECHO, nonce: null }), 'abc123')).toEqual({ ok: false });
  });
  test('wrong shapes are not ok', () => {
    const good = JSON.parse(renderJudgeBody(ECHO));
    for (const bad of [
      { ...good, judge: 'other' },
      { ...good, remoteAddress: 5 },
      { ...good, requestLine: null },
      { ...good, headers: 'x' },
      { ...good, headers: [['a']] },
      { ...good, headers: [['a', 1]] },
      [good],
      null,
    ]) {
      expect(readJudgeBody(JSON.stringify(bad) + ' abc123', 'abc123')).toEqual({ ok: false });
    }
  });
  test('truncated body is not ok', () => {
    const body = renderJudgeBody(ECHO);
    expect(readJudgeBody(body.slice(0, -1), 'abc123')).toEqual({ ok: false });
  });
  test('the rendered body is ASCII (its bytes survive ASCII-compatible charset conversion): other characters travel as JSON escapes', () => {
    const headers: [string, string][] = [['X-Name', 'caf\u00e9 \u{1F600} \u007f \u0000'], ['X-Lone', '\ud800']];
    const json = renderJudgeBody({ ...ECHO, headers });
    expect(/^[\x00-\x7e]*$/.test(json)).toBe(true);
    expect(json).toContain('caf\\u00e9 \\ud83d\\ude00 \\u007f \\u0000');
    expect(readJudgeBody(Buffer.from(json), 'abc123')).toMatchObject({ ok: true, headers });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), fc.string({ unit: 'binary' }))), (hs) => {
        const j = renderJudgeBody({ ...ECHO, headers: hs });
        expect(/^[\x00-\x7e]*$/.test(j)).toBe(true);
        expect(readJudgeBody(j, 'abc123')).toMatchObject({ ok: true, headers: hs });
      }),
    );
  });
  test('never throws on garbage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.string(), (bytes, nonce) => {
        const r = readJudgeBody(Buffer.from(bytes), nonce);
        expect(r.ok).toBe(false);
      }),
    );
  });
});

describe('extractNonce', () => {
  test.each([
    ['/judge?n=abc', 'abc'],
    ['/judge?a=1&n=abc&n=def', 'abc'],
    ['http://127.0.0.1:80/judge?x=y&n=abc', 'abc'],
    ['/judge?n=a%20b', 'a b'],
    ['/judge?n=abc#frag', 'abc'],
    ['/judge?n=', ''],
    ['/judge', null],
    ['/judge?nn=abc', null],
    ['/judge?n', null],
    ['/judge?n=%E0%A4%A', null],
  ])('%s -> %p', (input, out) => {
    expect(extractNonce(input)).toBe(out);
  });
});
