import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { fromWireError, toWireError } from '../../src/judge/tls-thread-protocol';

describe('tls-thread-protocol: errors across threads', () => {
  test('a bind error keeps its code (compose/bind.ts names the setting by EADDRINUSE)', () => {
    const e = Object.assign(new Error('listen EADDRINUSE: address already in use'), { code: 'EADDRINUSE' });
    const back = fromWireError(structuredClone(toWireError(e)));
    expect(back).toBeInstanceOf(Error);
    expect(back.code).toBe('EADDRINUSE');
    expect(back.message).toBe(e.message);
  });

  test('no code, a non-string code, a thrown non-Error', () => {
    expect(toWireError(new Error('x'))).toEqual({ message: 'x' });
    expect(toWireError(Object.assign(new Error('y'), { code: 12 }))).toEqual({ message: 'y' });
    expect(toWireError('plain')).toEqual({ message: 'plain' });
    expect(toWireError(null)).toEqual({ message: 'null' });
    expect('code' in fromWireError({ message: 'm' })).toBe(false);
  });

  test('any message and code survive the round trip', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (message, code) => {
        const back = fromWireError(structuredClone(toWireError(Object.assign(new Error(message), code === undefined ? {} : { code }))));
        expect(back.message).toBe(message);
        expect(back.code).toBe(code);
      }),
    );
  });
});
