/** Tests for src/cli/api-client.ts (pure parts): HTTP answers and network failures -> CliError with the right exit code and message. */
import { describe, expect, test } from 'bun:test';
import { httpError, networkError, WHERE_HINT } from '../../src/cli/api-client';
import { CliError, EXIT } from '../../src/cli/exit-codes';

describe('httpError', () => {
  test('401 -> 3 with the server reason and how to fix it', () => {
    const e = httpError(401, { error: 'Invalid API key', message: 'The provided API key is not valid' }, 'GET /me');
    expect(e.exitCode).toBe(EXIT.AUTH);
    expect(e.message).toContain('Invalid API key: The provided API key is not valid');
    expect(e.message).toContain('proxycheck login');
  });

  test('402 -> 4 saying how many checks are missing', () => {
    const e = httpError(402, { error: 'Insufficient Checks', message: 'x', required: 2000, available: 1500, shortfall: 500 }, 'POST /check');
    expect(e.exitCode).toBe(EXIT.QUOTA);
    expect(e.message).toBe('Not enough checks: this list needs 2,000 checks but the account has 1,500: 500 missing. Top up the account or check fewer proxies.');
    expect(httpError(402, { required: 5, available: 2 }, 'x').message).toContain('3 missing');
    expect(httpError(402, 'oops', 'x').message).toBe('Not enough checks (oops).');
  });

  test('other 4xx -> 5, with the region list once when given', () => {
    const e = httpError(400, { error: 'Invalid region', message: 'Region must be one of: sg1, us1', available_regions: ['sg1', 'us1'] }, 'POST /check');
    expect(e.exitCode).toBe(EXIT.CLIENT);
    expect(e.message).toBe('POST /check was refused (HTTP 400, Invalid region). Regions: sg1, us1 (`proxycheck regions` names them).');
    expect(e.message.split('sg1').length - 1).toBe(1);
    expect(httpError(413, {}, 'POST /check').message).toBe('POST /check was refused (HTTP 413).');
    expect(httpError(404, '<html>', 'GET /me').exitCode).toBe(EXIT.CLIENT);
  });

  test('5xx -> 6', () => {
    const e = httpError(503, { error: 'Service unavailable', message: 'shutting down' }, 'POST /check');
    expect(e.exitCode).toBe(EXIT.NETWORK);
    expect(e.message).toContain('HTTP 503, Service unavailable: shutting down');
    expect(httpError(500, '', 'x').message).toBe('x failed on the server (HTTP 500). Try again later.');
  });
});

describe('networkError', () => {
  test('refused, not found, timeout, other; CliErrors pass through', () => {
    expect(networkError(Object.assign(new Error('Unable to connect'), { code: 'ConnectionRefused' }), 'http://h:1', 'GET /me').message).toBe(
      `Cannot reach http://h:1 (GET /me): connection refused (is the service running?). ${WHERE_HINT}`,
    );
    // the service on another port or host: how to name it
    expect(WHERE_HINT).toContain('--url http://HOST:PORT');
    expect(WHERE_HINT).toContain('PROXYCHECK_URL');
    expect(networkError(Object.assign(new Error('x'), { code: 'ENOTFOUND' }), 'http://h', 'GET /me').message).toContain(`host not found. ${WHERE_HINT}`);
    expect(networkError(new Error('boom'), 'http://h', 'x').message).not.toContain(WHERE_HINT);
    const t = networkError(new DOMException('timed out', 'TimeoutError'), 'http://h', 'GET /me');
    expect(t.code).toBe('cli_timeout');
    expect(t.exitCode).toBe(EXIT.NETWORK);
    expect(networkError(new Error('boom'), 'http://h', 'x').message).toContain('boom');
    const own = new CliError(EXIT.AUTH, 'c', 'm');
    expect(networkError(own, 'http://h', 'x')).toBe(own);
  });
});
