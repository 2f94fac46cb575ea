import { describe, expect, test } from 'bun:test';
import type { Elem } from '../../src/web/client/browser';
import { viewContext } from '../../src/web/client/view-context';

function ctx(key: string | null) {
  let signedOut = 0;
  const c = viewContext({ key: () => key, onUnauthorized: () => signedOut++ });
  return { c, signedOut: () => signedOut };
}

describe('viewContext', () => {
  test('key(): the key; none asks to sign in again, peekKey() does not', () => {
    expect(ctx('k1').c.key()).toBe('k1');
    const t = ctx(null);
    expect(t.c.peekKey()).toBeNull();
    expect(t.signedOut()).toBe(0);
    expect(t.c.key()).toBeNull();
    expect(t.signedOut()).toBe(1);
  });

  test('failed(): a 401 signs out and writes nothing; anything else writes the message', () => {
    const where = { textContent: '' } as Elem;
    const t = ctx('k');
    t.c.failed(401, { error: 'bad key' }, where);
    expect([t.signedOut(), where.textContent]).toEqual([1, '']);
    t.c.failed(0, null, where);
    expect(where.textContent).not.toBe('');
    expect(t.signedOut()).toBe(1);
  });
});
