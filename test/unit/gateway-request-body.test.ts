/** Where a forwarded request's body ends (src/gateway/codec/request-body.ts): length, chunked, split-invariance, fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { RequestBodyFramer } from '../../src/gateway/codec/request-body';
import type { BodyFraming } from '../../src/gateway/codec/request-head';

const B = (s: string) => Buffer.from(s, 'latin1');

function run(framing: BodyFraming, stream: Buffer, cuts: number[] = []) {
  const f = new RequestBodyFramer(framing);
  const pieces: Buffer[] = [];
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (stream.length + 1)))].sort((x, y) => x - y)) {
    pieces.push(stream.subarray(at, c));
    at = c;
  }
  pieces.push(stream.subarray(at));
  const body: Buffer[] = [];
  let rest: Buffer | null = null;
  let error: string | null = null;
  for (const p of pieces) {
    if (rest !== null) {
      rest = Buffer.concat([rest, p]);
      continue;
    }
    const s = f.push(p);
    body.push(s.body);
    if (s.error !== null) {
      error = s.error;
      break;
    }
    if (s.done) rest = s.rest;
  }
  return { body: Buffer.concat(body).toString('latin1'), done: f.done, rest: rest?.toString('latin1') ?? null, error };
}

describe('request body framer', () => {
  test('no body: done at once, everything is rest', () => {
    expect(run({ kind: 'none' }, B('GET http://x/ HTTP/1.1\r\n\r\n'))).toEqual({ body: '', done: true, rest: 'GET http://x/ HTTP/1.1\r\n\r\n', error: null });
  });
  test('length: exactly that many bytes, the pipelined rest cut off', () => {
    expect(run({ kind: 'length', length: 5 }, B('helloGET /next'))).toEqual({ body: 'hello', done: true, rest: 'GET /next', error: null });
    expect(run({ kind: 'length', length: 5 }, B('hel'))).toEqual({ body: 'hel', done: false, rest: null, error: null });
  });
  test('chunked: relayed as is, up to the end of the trailers', () => {
    const body = '5;ext=1\r\nhello\r\n3\nabc\n0\r\nX-T: 1\r\n\r\n';
    expect(run({ kind: 'chunked' }, B(`${body}POST http://next/`))).toEqual({ body, done: true, rest: 'POST http://next/', error: null });
    expect(run({ kind: 'chunked' }, B('0\r\n\r\n'))).toEqual({ body: '0\r\n\r\n', done: true, rest: '', error: null });
  });
  test('chunked errors', () => {
    expect(run({ kind: 'chunked' }, B('zz\r\n')).error).toBe('bad_chunk');
    expect(run({ kind: 'chunked' }, B('3\r\nabcX')).error).toBe('bad_chunk');
    expect(run({ kind: 'chunked' }, B(`${'1'.repeat(5000)}`)).error).toBe('bad_chunk');
    expect(run({ kind: 'chunked' }, B('1234567890abcdef0\r\n')).error).toBe('bad_chunk');
  });

  test('property: any split gives the same body, end and rest; any bytes never throw', () => {
    const chunkedBody = fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 5 }).map((chunks) => {
      const parts = chunks.map((c) => Buffer.concat([B(`${c.length.toString(16)}\r\n`), Buffer.from(c), B('\r\n')]));
      return Buffer.concat([...parts, B('0\r\n\r\n'), B('NEXT')]);
    });
    fc.assert(
      fc.property(
        fc.oneof(chunkedBody.map((b) => ({ f: { kind: 'chunked' } as BodyFraming, b })), fc.uint8Array({ maxLength: 200 }).map((b) => ({ f: { kind: 'chunked' } as BodyFraming, b: Buffer.from(b) })), fc.tuple(fc.nat(300), fc.uint8Array({ maxLength: 300 })).map(([n, b]) => ({ f: { kind: 'length', length: n } as BodyFraming, b: Buffer.from(b) }))),
        fc.array(fc.nat(), { maxLength: 6 }),
        ({ f, b }, cuts) => {
          const whole = run(f, b);
          const split = run(f, b, cuts);
          // a streamed body is relayed before a later byte can prove it bad: on an error only the verdict must agree
          expect(split.error).toBe(whole.error);
          if (whole.error === null) expect(split).toEqual(whole);
          if (whole.done && whole.rest !== null) expect(whole.body + whole.rest).toBe(b.toString('latin1'));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('a generated chunked body ends exactly before what follows', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 1, maxLength: 30 }), { maxLength: 4 }), (chunks) => {
        const parts = chunks.map((c) => Buffer.concat([B(`${c.length.toString(16)}\r\n`), Buffer.from(c), B('\r\n')]));
        const body = Buffer.concat([...parts, B('0\r\n\r\n')]);
        const r = run({ kind: 'chunked' }, Buffer.concat([body, B('TAIL')]));
        expect(r).toEqual({ body: body.toString('latin1'), done: true, rest: 'TAIL', error: null });
      }),
    );
  });
});
