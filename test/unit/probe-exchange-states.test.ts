/**
 * The exchange's pure half (src/probe/net/exchange-states.ts): the state
 * after connect and after each SOCKS reply, and the exact failure (code and
 * message) each event means in each state. The socket driver is covered by
 * test/integration/probe-run.test.ts and probe-timeout.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import {
  closedError,
  connectAnswerError,
  deadlineError,
  ExchangeState as S,
  internalError,
  readSocksReply,
  socketError,
  socksExtraBytesError,
  STATE_NAMES,
  stateAfterConnect,
  stateAfterSocksReply,
  type ExchangeStateValue,
} from '../../src/probe/net/exchange-states';
import { SOCKS5_USER_PASS } from '../../src/probe/codec/socks-codec';

const ALL = Object.values(S) as ExchangeStateValue[];
const sysErr = (code: string): Error => Object.assign(new Error(`x ${code}`), { code });

describe('states', () => {
  test('numbered in order, one name each; "not connected yet" is <= CONNECTING', () => {
    expect(ALL).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(STATE_NAMES).toHaveLength(ALL.length);
    expect(S.IDLE < S.CONNECTING && S.RESOLVING < S.CONNECTING).toBe(true);
    for (const s of [S.HTTP_CONNECT, S.SOCKS4_REPLY, S.SOCKS5_METHOD, S.SOCKS5_AUTH, S.SOCKS5_REPLY, S.TLS, S.RESPONSE, S.DONE]) {
      expect(s).toBeGreaterThan(S.CONNECTING);
    }
  });
});

describe('transitions', () => {
  test('after connect: the handshake the proxy speaks, or straight to TLS / the request', () => {
    expect(stateAfterConnect('direct', false)).toBe(S.RESPONSE);
    expect(stateAfterConnect('direct', true)).toBe(S.TLS);
    expect(stateAfterConnect('http', false)).toBe(S.RESPONSE);
    expect(stateAfterConnect('http', true)).toBe(S.HTTP_CONNECT);
    expect(stateAfterConnect('socks4', false)).toBe(S.SOCKS4_REPLY);
    expect(stateAfterConnect('socks4', true)).toBe(S.SOCKS4_REPLY);
    expect(stateAfterConnect('socks5', false)).toBe(S.SOCKS5_METHOD);
    expect(stateAfterConnect('socks5', true)).toBe(S.SOCKS5_METHOD);
  });

  test('SOCKS5: method -> auth (user/pass chosen) or CONNECT; auth -> CONNECT', () => {
    expect(stateAfterSocksReply(S.SOCKS5_METHOD, SOCKS5_USER_PASS, false, false)).toBe(S.SOCKS5_AUTH);
    expect(stateAfterSocksReply(S.SOCKS5_METHOD, 0, false, false)).toBe(S.SOCKS5_REPLY);
    expect(stateAfterSocksReply(S.SOCKS5_AUTH, 0, false, true)).toBe(S.SOCKS5_REPLY);
    // the auth reply's value is never read as a method
    expect(stateAfterSocksReply(S.SOCKS5_AUTH, SOCKS5_USER_PASS, false, false)).toBe(S.SOCKS5_REPLY);
  });

  test('tunnel up: TLS for https, the request for http (bytes after the reply are its answer)', () => {
    for (const s of [S.SOCKS4_REPLY, S.SOCKS5_REPLY]) {
      expect(stateAfterSocksReply(s, 0x5a, false, true)).toBe(S.TLS);
      expect(stateAfterSocksReply(s, 0, false, false)).toBe(S.RESPONSE);
      expect(stateAfterSocksReply(s, 0, true, false)).toBe(S.RESPONSE);
    }
  });

  test('bytes the server should not have sent yet: DONE, with the message for the state', () => {
    expect(stateAfterSocksReply(S.SOCKS5_METHOD, 0, true, false)).toBe(S.DONE);
    expect(stateAfterSocksReply(S.SOCKS5_METHOD, SOCKS5_USER_PASS, true, false)).toBe(S.DONE);
    expect(stateAfterSocksReply(S.SOCKS5_AUTH, 0, true, false)).toBe(S.DONE);
    expect(stateAfterSocksReply(S.SOCKS4_REPLY, 0x5a, true, true)).toBe(S.DONE);
    expect(stateAfterSocksReply(S.SOCKS5_REPLY, 0, true, true)).toBe(S.DONE);
    expect(socksExtraBytesError(S.SOCKS5_METHOD)).toEqual({ code: 'bad_response', message: 'SOCKS5 server sent unexpected bytes' });
    expect(socksExtraBytesError(S.SOCKS5_AUTH)).toEqual({ code: 'bad_response', message: 'SOCKS5 server sent unexpected bytes' });
    expect(socksExtraBytesError(S.SOCKS4_REPLY)).toEqual({ code: 'bad_response', message: 'SOCKS server sent data before the TLS handshake' });
    expect(socksExtraBytesError(S.SOCKS5_REPLY)).toEqual({ code: 'bad_response', message: 'SOCKS server sent data before the TLS handshake' });
  });

  test('readSocksReply reads the reply the state waits for', () => {
    expect(readSocksReply(S.SOCKS4_REPLY, Buffer.from([0, 0x5a, 0, 0, 0, 0, 0, 0]), false)).toEqual({ kind: 'ok', consumed: 8, value: 0x5a });
    expect(readSocksReply(S.SOCKS5_METHOD, Buffer.from([5, 2]), true)).toMatchObject({ kind: 'ok', value: SOCKS5_USER_PASS });
    expect(readSocksReply(S.SOCKS5_METHOD, Buffer.from([5, 2]), false).kind).toBe('fail'); // user/pass chosen but none offered
    expect(readSocksReply(S.SOCKS5_AUTH, Buffer.from([1, 0]), true)).toMatchObject({ kind: 'ok', consumed: 2 });
    expect(readSocksReply(S.SOCKS5_REPLY, Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]), false)).toMatchObject({ kind: 'ok', consumed: 10 });
    expect(readSocksReply(S.SOCKS5_REPLY, Buffer.from([5, 0, 0]), false)).toEqual({ kind: 'incomplete' });
  });
});

describe('failures', () => {
  test('the answer to CONNECT', () => {
    expect(connectAnswerError(200, false)).toBeNull();
    expect(connectAnswerError(299, false)).toBeNull();
    expect(connectAnswerError(407, false)).toEqual({ code: 'auth_required', message: 'proxy answered CONNECT with 407 Proxy Authentication Required' });
    expect(connectAnswerError(403, false)).toEqual({ code: 'http_status', message: 'proxy answered CONNECT with 403' });
    expect(connectAnswerError(101, false)).toEqual({ code: 'http_status', message: 'proxy answered CONNECT with 101' });
    expect(connectAnswerError(200, true)).toEqual({ code: 'bad_response', message: 'proxy sent data before the TLS handshake' });
    expect(connectAnswerError(502, true)?.code).toBe('http_status'); // the status decides first
  });

  test('EOF or close, per state', () => {
    expect(closedError(S.RESPONSE, 'empty')).toEqual({ code: 'connection_closed', message: 'connection closed without an HTTP response' });
    expect(closedError(S.RESPONSE, 'truncated')).toEqual({ code: 'connection_closed', message: 'connection closed in the middle of the HTTP response' });
    expect(closedError(S.RESPONSE, 'bad_status_line')).toEqual({ code: 'bad_response', message: 'invalid HTTP response (bad_status_line)' });
    expect(closedError(S.CONNECTING, null)).toEqual({ code: 'connect_failed', message: 'connection closed while connecting' });
    expect(closedError(S.TLS, null)).toEqual({ code: 'tls_failed', message: 'connection closed during the TLS handshake' });
    expect(closedError(S.SOCKS5_METHOD, null)).toEqual({ code: 'connection_closed', message: 'connection closed while waiting for the SOCKS5 method reply' });
    expect(closedError(S.HTTP_CONNECT, null)).toEqual({ code: 'connection_closed', message: 'connection closed while waiting for the answer to CONNECT' });
  });

  test('socket errors, per state: the system code, else the message', () => {
    expect(socketError(S.CONNECTING, sysErr('ECONNREFUSED'))).toEqual({ code: 'connect_refused', message: 'connection refused' });
    expect(socketError(S.CONNECTING, sysErr('ETIMEDOUT'))).toEqual({ code: 'connect_timeout', message: 'connect timed out' });
    expect(socketError(S.CONNECTING, sysErr('EHOSTUNREACH'))).toEqual({ code: 'connect_failed', message: 'connect failed (EHOSTUNREACH)' });
    // our own exhaustion is never the proxy's connect_failed
    for (const code of ['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL']) {
      expect(socketError(S.CONNECTING, sysErr(code))).toMatchObject({ code: 'checker_overloaded' });
      expect(internalError(S.CONNECTING, `socket: ${code}`, code)).toMatchObject({ code: 'checker_overloaded' });
    }
    // the message names what changes it
    expect(socketError(S.CONNECTING, sysErr('EMFILE')).message).toBe(
      'the checker ran out of local resources (EMFILE); the proxy was not tried (raise the open-file limit (ulimit -n, systemd LimitNOFILE) or lower MAX_IN_FLIGHT (AGENT_SLOTS on a region agent))',
    );
    expect(socketError(S.CONNECTING, sysErr('EADDRNOTAVAIL')).message).toBe(
      'the checker ran out of local resources (EADDRNOTAVAIL); the proxy was not tried (lower MAX_IN_FLIGHT (AGENT_SLOTS on a region agent))',
    );
    expect(internalError(S.CONNECTING, 'boom', 'EWHATEVER')).toMatchObject({ code: 'connect_failed' });
    expect(socketError(S.CONNECTING, new Error('boom'))).toEqual({ code: 'connect_failed', message: 'connect failed (boom)' });
    expect(socketError(S.TLS, sysErr('ERR_SSL_WRONG_VERSION_NUMBER'))).toEqual({ code: 'tls_failed', message: 'TLS handshake failed (ERR_SSL_WRONG_VERSION_NUMBER)' });
    expect(socketError(S.RESPONSE, sysErr('ECONNRESET'))).toEqual({
      code: 'connection_closed',
      message: 'connection lost while waiting for the HTTP response (ECONNRESET)',
    });
    expect(socketError(S.SOCKS4_REPLY, new Error('gone'))).toEqual({ code: 'connection_closed', message: 'connection lost while waiting for the SOCKS4 reply (gone)' });
  });

  test('the deadline: connect_timeout until connected, timeout after', () => {
    expect(deadlineError(S.IDLE, 500)).toEqual({ code: 'connect_timeout', message: 'not connected within 500 ms (start)' });
    expect(deadlineError(S.RESOLVING, 500)).toEqual({ code: 'connect_timeout', message: 'not connected within 500 ms (DNS lookup)' });
    expect(deadlineError(S.CONNECTING, 500)).toEqual({ code: 'connect_timeout', message: 'not connected within 500 ms (TCP connect)' });
    expect(deadlineError(S.TLS, 500)).toEqual({ code: 'timeout', message: 'no complete answer within 500 ms (waiting for the TLS handshake)' });
    expect(deadlineError(S.RESPONSE, 2000)).toEqual({ code: 'timeout', message: 'no complete answer within 2000 ms (waiting for the HTTP response)' });
  });

  test('internal errors: connect_failed until connected, bad_response after', () => {
    expect(internalError(S.RESOLVING, 'x')).toEqual({ code: 'connect_failed', message: 'cannot connect: x' });
    expect(internalError(S.CONNECTING, 'x')).toEqual({ code: 'connect_failed', message: 'cannot connect: x' });
    expect(internalError(S.RESPONSE, 'x')).toEqual({ code: 'bad_response', message: 'internal error: x' });
  });

  test('every failure has the one shape {code, message}', () => {
    for (const s of ALL) {
      if (s === S.DONE) continue;
      for (const e of [closedError(s, 'truncated'), socketError(s, sysErr('EPIPE')), deadlineError(s, 1), internalError(s, 'y')]) {
        expect(Object.keys(e)).toEqual(['code', 'message']);
      }
    }
  });
});
