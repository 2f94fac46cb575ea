/**
 * JudgeRequest (src/judge/server.ts): the judge's per-connection core, fed
 * the same request split at every byte, and the 400 / 431 answers.
 */
import { describe, expect, test } from 'bun:test';
import { JudgeRequest } from '../../src/judge/server';

const head = 'GET http://judge.test/judge?n=abc123 HTTP/1.1\r\nHost: judge.test\r\nX-Forwarded-For: 10.0.0.1\r\nVia: 1.1 proxy\r\n\r\n';
const bodyOf = (reply: string) => JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('JudgeRequest', () => {
  test('the same reply whatever the split, and only once', () => {
    const whole = new JudgeRequest('::ffff:127.0.0.1').feed(Buffer.from(head, 'latin1'));
    expect(whole).not.toBeNull();
    expect(whole!.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    for (let cut = 1; cut < head.length; cut++) {
      const r = new JudgeRequest('::ffff:127.0.0.1');
      expect(r.feed(Buffer.from(head.slice(0, cut), 'latin1'))).toBeNull();
      const reply = r.feed(Buffer.from(head.slice(cut), 'latin1'));
      expect(bodyOf(reply!)).toEqual(bodyOf(whole!));
      expect(r.feed(Buffer.from('more', 'latin1'))).toBeNull();
    }
  });

  test('what the reply says: mapped address unwrapped, headers in order with their case', () => {
    const b = bodyOf(new JudgeRequest('::ffff:127.0.0.1').feed(Buffer.from(head, 'latin1'))!);
    expect(JSON.stringify(b)).toContain('127.0.0.1');
    expect(JSON.stringify(b)).not.toContain('::ffff:');
    expect(JSON.stringify(b).indexOf('X-Forwarded-For')).toBeLessThan(JSON.stringify(b).indexOf('Via'));
  });

  test('a malformed head gets 400, a head over 16 KiB gets 431', () => {
    expect(new JudgeRequest('1.2.3.4').feed(Buffer.from('NOT HTTP\r\n\r\n'))!.startsWith('HTTP/1.1 400 ')).toBe(true);
    const r = new JudgeRequest('1.2.3.4');
    expect(r.feed(Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(8 * 1024)}\r\n`))).toBeNull();
    expect(r.feed(Buffer.from(`Y: ${'b'.repeat(9 * 1024)}\r\n`))!.startsWith('HTTP/1.1 431 ')).toBe(true);
  });
});
