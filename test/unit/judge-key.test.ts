/** The process's judge key: random unless JUDGE_KEY, shared by every service of the process, conflicts refused. */
import { describe, expect, test } from 'bun:test';
import { claimJudgeKey, judgeSigningKey } from '../../src/judge/judge-key';
import { ServiceError } from '../../src/errors';

const A = 'a-judge-key-of-16+chars';
const B = 'b-judge-key-of-16+chars';

describe('claimJudgeKey', () => {
  test('without JUDGE_KEY: the process key, random (32 bytes, base64url), the same for every service', () => {
    const one = claimJudgeKey(undefined);
    const two = claimJudgeKey(undefined);
    expect(one.key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(two.key).toBe(one.key);
    expect(judgeSigningKey()).toBe(one.key);
    one.release();
    two.release();
  });
  test('JUDGE_KEY becomes the key /judge signs with while a service holds it; then a fresh random key', () => {
    const before = judgeSigningKey();
    const c = claimJudgeKey(A);
    expect(c.key).toBe(A);
    expect(judgeSigningKey()).toBe(A);
    const same = claimJudgeKey(A);
    const plain = claimJudgeKey(undefined); // a service without JUDGE_KEY takes the process's key
    expect(plain.key).toBe(A);
    c.release();
    c.release(); // idempotent: does not release the others' hold
    same.release();
    expect(judgeSigningKey()).toBe(A);
    plain.release();
    expect(judgeSigningKey()).not.toBe(A);
    expect(judgeSigningKey()).not.toBe(before);
  });
  test('a different JUDGE_KEY while another service holds the key is judge_key_conflict', () => {
    const plain = claimJudgeKey(undefined);
    let caught: unknown;
    try {
      claimJudgeKey(B);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ServiceError);
    expect((caught as ServiceError).code).toBe('judge_key_conflict');
    expect(judgeSigningKey()).toBe(plain.key);
    plain.release();
    const a = claimJudgeKey(A);
    expect(() => claimJudgeKey(B)).toThrow(/same JUDGE_KEY/);
    a.release();
    const b = claimJudgeKey(B); // nobody holds a key any more
    expect(b.key).toBe(B);
    b.release();
  });
});
