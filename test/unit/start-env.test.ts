import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { npmStartEnv, startScriptEnv } from '../../scripts/start-env';

describe('scripts/start-env.ts (the benchmarks and the demo run the service as npm start does)', () => {
  test('leading VAR=value words, up to the command', () => {
    expect(startScriptEnv('A=1 B_2=x bun src/main.ts C=3')).toEqual({ A: '1', B_2: 'x' });
    expect(startScriptEnv('bun src/main.ts')).toEqual({});
    expect(startScriptEnv('  A= bun x')).toEqual({ A: '' });
  });

  test("package.json's start script gives the runtime settings docs/OPERATIONS.md documents (heap hint, no FTL tier)", () => {
    const start = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(startScriptEnv(start)).toEqual({ BUN_JSC_forceRAMSize: '268435456', BUN_JSC_useFTLJIT: '0' });
    const ops = readFileSync(new URL('../../docs/OPERATIONS.md', import.meta.url), 'utf8');
    for (const [k, v] of Object.entries(startScriptEnv(start))) expect(ops).toContain(`${k}=${v}`);
    expect(start.endsWith('bun src/main.ts')).toBe(true);
    expect(npmStartEnv(new URL('../../', import.meta.url).pathname)).toEqual(startScriptEnv(start));
  });
});
