/** src/probe/net/tls-sessions.ts: one session per pinned target, the latest kept, at most MAX_TARGETS targets. */
import { beforeEach, describe, expect, test } from 'bun:test';
import { clearSessions, keepSession, MAX_TARGETS, sessionFor, sessionKey } from '../../src/probe/net/tls-sessions';

beforeEach(() => clearSessions());

describe('tls sessions', () => {
  test('a key per host, port and pin; the latest session kept', () => {
    const k = sessionKey('127.0.0.1', 443, 'AA:BB');
    expect(sessionFor(k)).toBeUndefined();
    keepSession(k, Buffer.from('one'));
    keepSession(k, Buffer.from('two'));
    expect(sessionFor(k)?.toString()).toBe('two');
    expect(sessionFor(sessionKey('127.0.0.1', 443, 'AA:BC'))).toBeUndefined(); // another pin: another target
    expect(sessionFor(sessionKey('127.0.0.1', 444, 'AA:BB'))).toBeUndefined();
    expect(sessionFor(sessionKey('127.0.0.2', 443, 'AA:BB'))).toBeUndefined();
  });

  test('at most MAX_TARGETS targets: the oldest goes first', () => {
    for (let i = 0; i <= MAX_TARGETS; i++) keepSession(sessionKey('h', i, 'P'), Buffer.from(String(i)));
    expect(sessionFor(sessionKey('h', 0, 'P'))).toBeUndefined();
    for (let i = 1; i <= MAX_TARGETS; i++) expect(sessionFor(sessionKey('h', i, 'P'))?.toString()).toBe(String(i));
  });
});
