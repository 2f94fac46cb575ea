/** Tests for src/http/serve-options.ts: production mode, and Bun's error handler answers the contract's 500 and logs the detail. */
import { expect, test } from 'bun:test';
import { memoryLogger } from '../../src/log';
import { serveOptions } from '../../src/http/serve-options';

test('development mode is off', () => {
  expect(serveOptions(memoryLogger('debug')).development).toBe(false);
});

test('an error Bun catches becomes the fixed 500 JSON body; the detail goes to the log only', async () => {
  const log = memoryLogger('debug');
  const res = serveOptions(log).error(new Error('ENOENT /secret/path/file'));
  expect(res.status).toBe(500);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const text = await res.text();
  // Bun does not say which request it was: a new request id names the failure in the body, the header and the log line
  const body = JSON.parse(text) as Record<string, string>;
  expect(body).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred', request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  expect(res.headers.get('x-request-id')).toBe(body.request_id!);
  expect(log.lines[0]).toMatchObject({ msg: 'unhandled error outside the app', requestId: body.request_id });
  expect(text).not.toContain('/secret/path');
  expect(JSON.stringify(log.lines)).toContain('/secret/path');
});
