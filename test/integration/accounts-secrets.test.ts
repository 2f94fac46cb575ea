/**
 * src/secrets.ts: RESULT_SECRET / ADMIN_TOKEN are generated into DATA_DIR
 * (mode 0600) when absent, reused afterwards, and env values win.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config';
import { readOrCreateSecret, resolveSecrets } from '../../src/secrets';

const dir = mkdtempSync(join(tmpdir(), 'secrets-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('resolveSecrets', () => {
  test('generates both secrets once (0600) and reuses them', async () => {
    const dataDir = join(dir, 'a');
    const c1 = await resolveSecrets(parseConfig({ DATA_DIR: dataDir }));
    expect(c1.storage.resultSecret?.length).toBeGreaterThanOrEqual(32);
    expect(c1.http.adminToken?.length).toBeGreaterThanOrEqual(32);
    expect(c1.storage.resultSecret).not.toBe(c1.http.adminToken);
    expect(statSync(join(dataDir, 'result-secret')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(c1.http.adminToken ?? '');
    const c2 = await resolveSecrets(parseConfig({ DATA_DIR: dataDir }));
    expect([c2.storage.resultSecret, c2.http.adminToken]).toEqual([c1.storage.resultSecret, c1.http.adminToken]);
  });

  test('values from the environment win and write nothing', async () => {
    const dataDir = join(dir, 'b');
    const c = await resolveSecrets(parseConfig({ DATA_DIR: dataDir, RESULT_SECRET: 'r'.repeat(20), ADMIN_TOKEN: 't'.repeat(20) }));
    expect([c.storage.resultSecret, c.http.adminToken]).toEqual(['r'.repeat(20), 't'.repeat(20)]);
    expect(() => statSync(join(dataDir, 'result-secret'))).toThrow();
  });

  test('a too-short secret file is refused with a clear error', () => {
    const dataDir = join(dir, 'c');
    readOrCreateSecret(dataDir, 'x');
    writeFileSync(join(dataDir, 'x'), 'short');
    expect(() => readOrCreateSecret(dataDir, 'x')).toThrow(/at least 16 characters/);
  });

  test('concurrent creation converges on one value', () => {
    const dataDir = join(dir, 'd');
    const values = new Set(Array.from({ length: 10 }, () => readOrCreateSecret(dataDir, 'same')));
    expect(values.size).toBe(1);
  });
});
