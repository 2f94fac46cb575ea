/**
 * The error root (src/errors.ts): stable codes, causes, and the one
 * error-to-text function. ApiError (the HTTP layer's) is a ServiceError too.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { errorCode, errorText, fromWireError, isServiceError, ServiceError, toWireError } from '../../src/errors';
import { ApiError } from '../../src/http/api-errors';
import { InsufficientQuotaError } from '../../src/jobs/job-errors';
import { DOMAIN_ERROR_CODES } from '../../src/error-codes';
import { memoryLogger } from '../../src/log';

describe('ServiceError', () => {
  test('the log line of a ServiceError has its name, code, message and cause chain; its code is all a user is shown', () => {
    const log = memoryLogger('debug');
    const cause = Object.assign(new Error('ENOSPC: no space left on device, write /data/results/x.json'), { code: 'ENOSPC' });
    const e = new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, 'writing a result failed', { cause });
    log.error('job failed', { err: e });
    expect(log.lines[0]!.err).toMatchObject({
      name: 'ServiceError',
      code: 'result_write_failed',
      message: 'writing a result failed',
      cause: { code: 'ENOSPC', message: expect.stringContaining('/data/results') },
    });
    // what reaches a history row or an API body: the stable code, never the message or the path
    expect(errorCode(e)).toBe('result_write_failed');
  });

  test('isServiceError: any, or one code; subclasses count', () => {
    expect(isServiceError(new ServiceError('a', 'x'))).toBe(true);
    expect(isServiceError(new ServiceError('a', 'x'), 'a')).toBe(true);
    expect(isServiceError(new ServiceError('a', 'x'), 'b')).toBe(false);
    expect(isServiceError(new InsufficientQuotaError(3, 1), 'insufficient_quota')).toBe(true);
    expect(isServiceError(new ApiError(400, { error: 'x' }))).toBe(true);
    expect(isServiceError(new Error('plain'))).toBe(false);
    expect(isServiceError('text')).toBe(false);
  });

  test('errorCode: own code, a system error code, else internal', () => {
    expect(errorCode(new ServiceError('shard_failed', 'x'))).toBe('shard_failed');
    expect(errorCode(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(errorCode(new Error('x'))).toBe('internal');
    expect(errorCode(Object.assign(new Error('x'), { code: 42 }))).toBe('internal');
    expect(errorCode(null)).toBe('internal');
    expect(errorCode(undefined)).toBe('internal');
  });

  test('errorText: an error\'s message, anything else as a string', () => {
    expect(errorText(new Error('boom'))).toBe('boom');
    expect(errorText('plain')).toBe('plain');
    expect(errorText(42)).toBe('42');
  });
});

describe('errors across threads (WireError)', () => {
  test('a bind error keeps its code (compose/bind.ts names the setting by EADDRINUSE), name and message', () => {
    const e = Object.assign(new Error('listen EADDRINUSE: address already in use'), { code: 'EADDRINUSE' });
    const back = fromWireError(structuredClone(toWireError(e)));
    expect(back).toBeInstanceOf(Error);
    expect(back.code).toBe('EADDRINUSE');
    expect(back.message).toBe(e.message);
    expect(back.name).toBe('Error');
    expect(back.stack).toBe(e.stack);
  });

  test('only string and number fields cross; a thrown non-Error becomes its text', () => {
    const e = Object.assign(new Error('y'), { code: 12, detail: 'd', nested: { a: 1 }, fn: () => 1 });
    expect(toWireError(e).fields).toEqual({ code: 12, detail: 'd' });
    expect(toWireError('plain')).toEqual({ name: 'Error', message: 'plain', stack: undefined, fields: {} });
    expect(toWireError(null).message).toBe('null');
    expect('code' in fromWireError(toWireError(new Error('m')))).toBe(false);
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
