import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { startScriptEnv } from '../../bench/e2e/service';

describe('startScriptEnv (the bench runs the service as npm start does)', () => {
  test('leading VAR=value words, up to the command', () => {
    expect(startScriptEnv('A=1 B_2=x bun src/main.ts C=3')).toEqual({ A: '1', B_2: 'x' });
    expect(startScriptEnv('bun src/main.ts')).toEqual({});
    expect(startScriptEnv('  A= bun x')).toEqual({ A: '' });
  });

  test("package.json's start script gives the JSC heap hint the README documents", () => {
    const start = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(startScriptEnv(start)).toEqual({ BUN_JSC_forceRAMSize: '268435456' });
    expect(start.endsWith('bun src/main.ts')).toBe(true);
  });
});
