import { describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LiveWriters } from '../../src/results/live-writers';
import { openResultWriter } from '../../src/results/writer';

describe('LiveWriters: what a store still writes', () => {
  test('an id counts from before its writer exists until it finished; abortAll aborts what is open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pc-live-'));
    try {
      const live = new LiveWriters();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const opening = live.open('a', async () => {
        await gate;
        return openResultWriter(join(dir, 'a.json'));
      });
      expect([...live.ids()]).toEqual(['a']); // being opened: a sweep must leave its files alone
      release();
      const a = await opening;
      const b = await live.open('b', () => openResultWriter(join(dir, 'b.json')));
      expect([...live.ids()].sort()).toEqual(['a', 'b']);
      await a.abort();
      expect([...live.ids()]).toEqual(['b']); // settled writers no longer count
      await live.abortAll();
      expect(live.ids().size).toBe(0);
      expect(b.state).not.toBe('open');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a failed open does not leave its id counted', async () => {
    const live = new LiveWriters();
    await expect(live.open('x', () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(live.ids().size).toBe(0);
  });
});
