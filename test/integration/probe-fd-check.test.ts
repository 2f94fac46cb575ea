/**
 * src/probe/net/fd-check.ts: in a process at its open-file limit (a child
 * under prlimit that opens files until EMFILE), fdsExhausted() says EMFILE;
 * with a descriptor free it says null.
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';

const MODULE = join(import.meta.dir, '../../src/probe/net/fd-check.ts');

describe('fdsExhausted', () => {
  test('null while descriptors are free', async () => {
    const { fdsExhausted } = await import('../../src/probe/net/fd-check');
    expect(fdsExhausted()).toBeNull();
  });

  test('EMFILE in a process at its open-file limit, null again once one is freed', async () => {
    const script = `
      import { openSync, closeSync } from 'node:fs';
      import { fdsExhausted } from ${JSON.stringify(MODULE)};
      const held = [];
      for (;;) { try { held.push(openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; break; } }
      const full = fdsExhausted();
      closeSync(held.pop());
      console.log(JSON.stringify({ full, freed: fdsExhausted(), held: held.length }));
    `;
    const child = Bun.spawn(['prlimit', '--nofile=200:200', process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' });
    const out = await new Response(child.stdout).text();
    expect(await child.exited).toBe(0);
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { full: string | null; freed: string | null; held: number };
    expect(r.full).toBe('EMFILE');
    expect(r.freed).toBeNull();
    expect(r.held).toBeGreaterThan(50);
  });
});
