/** src/probe/codec/socks-answer.ts: an http check's answer that was a SOCKS server's, told from its bytes. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { SOCKS_ANSWER_MESSAGES, socksAnswerError, socksAnswerOf } from '../../src/probe/codec/socks-answer';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('socksAnswerOf', () => {
  test('SOCKS5 method choices and replies', () => {
    // microsocks' answer to "GET ...": a general-failure reply
    expect(socksAnswerOf(bytes(0x05, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0))).toBe('socks5');
    expect(socksAnswerOf(bytes(0x05, 0xff))).toBe('socks5'); // no acceptable method
    expect(socksAnswerOf(bytes(0x05, 0x00))).toBe('socks5');
    expect(socksAnswerOf(bytes(0x05, 0x08))).toBe('socks5');
    expect(socksAnswerOf(bytes(0x05))).toBe('socks5'); // one byte, then the end
    expect(socksAnswerOf(bytes(0x05, 0x09))).toBeNull();
    expect(socksAnswerOf(bytes(0x05, 0x48))).toBeNull();
  });

  test('SOCKS4 replies (version 0, or 4 from servers that echo it)', () => {
    for (const code of [0x5a, 0x5b, 0x5c, 0x5d]) {
      expect(socksAnswerOf(bytes(0x00, code, 0, 80, 1, 2, 3, 4))).toBe('socks4');
      expect(socksAnswerOf(bytes(0x04, code))).toBe('socks4');
    }
    expect(socksAnswerOf(bytes(0x00, 0x59))).toBeNull();
    expect(socksAnswerOf(bytes(0x00, 0x5e))).toBeNull();
    expect(socksAnswerOf(bytes(0x00))).toBeNull();
  });

  test('HTTP answers, garbage and nothing are not SOCKS', () => {
    expect(socksAnswerOf(new TextEncoder().encode('HTTP/1.1 200 OK\r\n'))).toBeNull();
    expect(socksAnswerOf(new TextEncoder().encode('<html>'))).toBeNull();
    expect(socksAnswerOf(bytes())).toBeNull();
  });

  test('property: an answer starting with "H" (every HTTP status line) is never called SOCKS', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), (rest) => {
        expect(socksAnswerOf(Uint8Array.from([0x48, ...rest]))).toBeNull();
      }),
    );
  });

  test('only the first two bytes count', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 2, maxLength: 12 }), (b) => {
        expect(socksAnswerOf(b)).toBe(socksAnswerOf(b.subarray(0, 2)));
      }),
    );
  });
});

describe('socksAnswerError', () => {
  test('bad_response with a fixed message naming the protocol, the type to use and the scheme', () => {
    expect(socksAnswerError('socks5')).toEqual({ code: 'bad_response', message: SOCKS_ANSWER_MESSAGES.socks5 });
    expect(SOCKS_ANSWER_MESSAGES.socks5).toBe(
      'The proxy answered like a SOCKS5 server; check it with type socks5 or auto, or write it socks5://host:port in the list',
    );
    expect(socksAnswerError('socks4').message).toContain('SOCKS4 server; check it with type socks4 or auto');
  });
});
