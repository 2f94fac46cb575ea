/** The judge body's signature: sign/verify with bytes, what a failure says changed, re-encodings, any change detected. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { readJudgeBody, renderJudgeBody } from '../../src/probe/codec/judge-body';
import {
  bodyCodings,
  decodeBody,
  describeChange,
  judgeIntegrity,
  signJudgeBody,
  verifyJudgeBody,
  type IntegrityVerdict,
} from '../../src/probe/codec/integrity';

const KEY = 'k'.repeat(32);
const NONCE = '0123456789abcdef0123456789abcdef';
const echo = (nonce: string = NONCE) => ({
  requestLine: `GET /judge?n=${nonce} HTTP/1.1`,
  headers: [
    ['Host', '127.0.0.1:3000'],
    ['Via', '1.1 "quoted" \\ proxy'],
  ] as [string, string][],
  remoteAddress: '203.0.113.7',
  nonce,
});
const signed = (nonce: string = NONCE, key = KEY): Buffer => Buffer.from(signJudgeBody(renderJudgeBody(echo(nonce)), key));
const check = (body: Buffer, headers: [string, string][] = [], truncated = false): IntegrityVerdict =>
  judgeIntegrity({ headers, body, truncated, key: KEY, nonce: NONCE });
const tampered = (v: IntegrityVerdict): { change: string; message: string } => {
  if (v.kind !== 'tampered') throw new Error(`expected tampered, got ${v.kind}`);
  return v;
};

describe('signJudgeBody / verifyJudgeBody', () => {
  test('the signature is the last member: HMAC-SHA256 over every byte before it, with their count', () => {
    const json = renderJudgeBody(echo());
    const body = signJudgeBody(json, KEY);
    const prefix = json.slice(0, -1);
    const hex = createHmac('sha256', KEY).update(prefix).digest('hex');
    expect(body).toBe(`${prefix},"sig":"v1:${prefix.length}:${hex}"}`);
    expect(verifyJudgeBody(Buffer.from(body), KEY)).toBe(true);
  });
  test('the signed body is still the judge body readJudgeBody reads', () => {
    const r = readJudgeBody(signed(), NONCE);
    expect(r).toEqual({ ok: true, headers: echo().headers, remoteAddress: '203.0.113.7', requestLine: `GET /judge?n=${NONCE} HTTP/1.1` });
  });
  test('another key, an unsigned body, an empty body do not verify', () => {
    expect(verifyJudgeBody(signed(NONCE, 'another key, 16+ chars'), KEY)).toBe(false);
    expect(verifyJudgeBody(Buffer.from(renderJudgeBody(echo())), KEY)).toBe(false);
    expect(verifyJudgeBody(Buffer.alloc(0), KEY)).toBe(false);
  });
  test('any change of a signed body is detected (property)', () => {
    const base = signed();
    const mutation = fc.oneof(
      // replace one byte
      fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }).map(({ at, byte }) => (b: Buffer) => {
        const c = Buffer.from(b);
        c[at % c.length] = byte;
        return c;
      }),
      // insert bytes
      fc.record({ at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }).map(({ at, bytes }) => (b: Buffer) => {
        const i = at % (b.length + 1);
        return Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]);
      }),
      // delete a range
      fc.record({ at: fc.nat(), n: fc.integer({ min: 1, max: 40 }) }).map(({ at, n }) => (b: Buffer) => {
        const i = at % b.length;
        return Buffer.concat([b.subarray(0, i), b.subarray(i + n)]);
      }),
    );
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (ms) => {
        let b: Buffer = base;
        for (const m of ms) b = m(b);
        fc.pre(!b.equals(base));
        expect(verifyJudgeBody(b, KEY)).toBe(false);
        const v = check(b);
        expect(v.kind).not.toBe('intact');
      }),
    );
  });
  test('verify never throws on garbage', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(verifyJudgeBody(Buffer.from(bytes), KEY)).toBe(false);
        expect(() => check(Buffer.concat([Buffer.from(bytes), Buffer.from(NONCE)]))).not.toThrow();
      }),
    );
  });
});

describe('judgeIntegrity: what changed', () => {
  const body = signed();
  test('the exact body is intact; a body without our nonce is foreign', () => {
    expect(check(body)).toEqual({ kind: 'intact' });
    expect(check(body, [['Via', '1.1 squid'], ['Content-Encoding', 'identity'], ['Transfer-Encoding', 'chunked']])).toEqual({ kind: 'intact' });
    expect(check(Buffer.from('<html>Hotel WiFi</html>'))).toEqual({ kind: 'foreign' });
    expect(check(signed('ffffffffffffffffffffffffffffffff'))).toEqual({ kind: 'foreign' });
  });
  test('a <script> injected inside: bytes injected, with the count', () => {
    const s = body.toString('latin1');
    const at = s.indexOf('"headers"');
    const script = '"x":"<script>alert(1)</script>",';
    expect(script.length).toBe(32);
    const v = tampered(check(Buffer.from(s.slice(0, at) + script + s.slice(at))));
    expect(v.change).toBe('injected');
    expect(v.message).toBe('bytes injected: 32 bytes more inside the body than the judge signed');
  });
  test('the signed body wrapped in a larger one: bytes injected, intact inside', () => {
    const v = tampered(check(Buffer.concat([Buffer.from('<script>x()</script>'), body, Buffer.from('\n<!-- ad -->')])));
    expect(v.change).toBe('injected');
    expect(v.message).toBe("bytes injected: the judge's signed body arrived intact inside a larger one (20 bytes before it and 12 bytes after it)");
  });
  test('bytes appended after it: length differs', () => {
    const v = tampered(check(Buffer.concat([body, Buffer.from('\n')])));
    expect(v).toMatchObject({ change: 'length', message: "length differs: 1 byte appended after the judge's signed body" });
  });
  test('cut short: length differs', () => {
    const v = tampered(check(body.subarray(0, 120)));
    expect(v).toMatchObject({ change: 'length', message: "length differs: the body ends after 120 bytes, before the judge's signature (cut short)" });
    const s = body.toString('latin1');
    const shorter = s.replace('"Via","1.1 \\"quoted\\" \\\\ proxy"', '"Via","1.1"');
    expect(tampered(check(Buffer.from(shorter))).message).toBe('length differs: the body is 20 bytes shorter than the judge signed');
    expect(tampered(check(Buffer.from(s), [], true)).change).toBe('length');
  });
  test('a stale copy with our nonce swapped in: body replaced', () => {
    const stale = signed('ffffffffffffffffffffffffffffffff').toString('latin1').replaceAll('ffffffffffffffffffffffffffffffff', NONCE);
    const v = tampered(check(Buffer.from(stale)));
    expect(v).toMatchObject({ change: 'replaced', message: 'body replaced: same length as the judge signed, different bytes (a stale or rewritten copy)' });
  });
  test('an unsigned copy, or our nonce in some other page: body replaced', () => {
    expect(tampered(check(Buffer.from(renderJudgeBody(echo()))))).toMatchObject({ change: 'replaced', message: "body replaced: the judge's signature is missing: an unsigned copy of the answer" });
    expect(tampered(check(Buffer.from(`<html>you asked for /judge?n=${NONCE}</html>`))).change).toBe('replaced');
    const s = body.toString('latin1');
    const upper = s.slice(0, -66) + s.slice(-66, -2).toUpperCase() + '"}';
    expect(tampered(check(Buffer.from(upper))).change).toBe('replaced');
  });
  test('compressed by the proxy: re-encoded, whatever the coding', () => {
    for (const [coding, bytes] of [
      ['gzip', gzipSync(body)],
      ['x-gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['deflate', deflateRawSync(body)],
      ['br', brotliCompressSync(body)],
    ] as const) {
      const v = tampered(check(bytes, [['Content-Encoding', coding]]));
      expect(v.change).toBe('re-encoded');
      expect(v.message).toBe(`re-encoded: the proxy sent the body with ${coding} coding, which the judge never uses; the judge's body inside is intact`);
    }
    const changed = gzipSync(Buffer.concat([body, Buffer.from('x')]));
    expect(tampered(check(changed, [['Transfer-Encoding', 'gzip, chunked']])).message).toBe(
      're-encoded: the proxy sent the body with gzip coding, which the judge never uses; the body inside differs too',
    );
  });
  test('a coding label on the plain body still counts; a compressed foreign page is foreign', () => {
    expect(tampered(check(body, [['Content-Encoding', 'gzip']])).change).toBe('re-encoded');
    expect(check(gzipSync('<html>portal</html>'), [['Content-Encoding', 'gzip']])).toEqual({ kind: 'foreign' });
    expect(check(Buffer.from('not gzip'), [['Content-Encoding', 'gzip']])).toEqual({ kind: 'foreign' });
  });
  test('converted to UTF-16: re-encoded', () => {
    const le = Buffer.from(body.toString('latin1'), 'utf16le');
    expect(tampered(check(le))).toMatchObject({ change: 're-encoded', message: 're-encoded: the body arrived converted to UTF-16; the judge sends ASCII' });
    expect(tampered(check(Buffer.from(le).swap16())).change).toBe('re-encoded');
  });
});

describe('helpers', () => {
  test('bodyCodings: content and transfer codings, lower-cased, without identity and chunked', () => {
    expect(bodyCodings([['Content-Type', 'x'], ['content-encoding', 'GZIP'], ['Transfer-Encoding', 'br, chunked'], ['Content-Encoding', 'identity']])).toEqual(['gzip', 'br']);
    expect(bodyCodings([])).toEqual([]);
  });
  test('decodeBody undoes codings in reverse order; null for unknown codings or bad bytes', () => {
    const raw = Buffer.from('hello');
    expect(decodeBody(gzipSync(brotliCompressSync(raw)), ['br', 'gzip'])?.toString()).toBe('hello');
    expect(decodeBody(raw, ['compress'])).toBeNull();
    expect(decodeBody(raw, ['gzip'])).toBeNull();
  });
  test('describeChange of an intact body inside nothing else is never called intact', () => {
    // the slow path only runs on failures; on its own it still names a change for a body with extra bytes
    expect(describeChange(Buffer.concat([signed(), Buffer.from(' ')]), KEY).kind).toBe('tampered');
  });
});
