import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { npmStartEnv, startScriptEnv } from '../../scripts/start-env';
import { missingRuntimeSettings, RUNTIME_SETTINGS } from '../../src/runtime-settings';

describe('scripts/start-env.ts (the benchmarks and the demo run the service as npm start does)', () => {
  test('leading VAR=value words, up to the command', () => {
    expect(startScriptEnv('A=1 B_2=x bun src/main.ts C=3')).toEqual({ A: '1', B_2: 'x' });
    expect(startScriptEnv('bun src/main.ts')).toEqual({});
    expect(startScriptEnv('  A= bun x')).toEqual({ A: '' });
  });

  test("package.json's start script is plain: the service applies its runtime settings itself, however started", () => {
    const start = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe('bun src/main.ts');
    expect(npmStartEnv(new URL('../../', import.meta.url).pathname)).toEqual({});
  });
});

describe('src/runtime-settings.ts', () => {
  test('the settings docs/OPERATIONS.md documents (heap hint, no FTL tier)', () => {
    expect(RUNTIME_SETTINGS).toEqual({ BUN_JSC_forceRAMSize: '268435456', BUN_JSC_useFTLJIT: '0' });
    const ops = readFileSync(new URL('../../docs/OPERATIONS.md', import.meta.url), 'utf8');
    for (const [k, v] of Object.entries(RUNTIME_SETTINGS)) expect(ops).toContain(`${k}=${v}`);
  });

  test('only the missing ones are added; a value set is kept', () => {
    expect(missingRuntimeSettings({})).toEqual({ ...RUNTIME_SETTINGS });
    expect(missingRuntimeSettings({ BUN_JSC_useFTLJIT: '1' })).toEqual({ BUN_JSC_forceRAMSize: '268435456' });
    expect(missingRuntimeSettings({ ...RUNTIME_SETTINGS })).toEqual({});
  });
});
