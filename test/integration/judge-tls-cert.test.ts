/**
 * src/judge/tls-cert.ts (the built-in judge's certificate in DATA_DIR) and
 * src/judge/tls-judge-check.ts (the TLS judge asked directly at start), with
 * the raw judge's TLS listener (src/judge/server.ts `tls`).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { JUDGE_CERT_FILE, parseJudgeCertificate, readOrCreateJudgeCertificate } from '../../src/judge/tls-cert';
import { checkTlsJudge } from '../../src/judge/tls-judge-check';
import { startJudgeServer } from '../../src/judge/server';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import type { TlsJudgeTarget } from '../../src/probe/types';
import { refusedPort } from '../fixtures/fake-servers';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'pc-judge-cert-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the judge certificate in DATA_DIR', () => {
  test('made at first start (0600, key + certificate, EC P-256, CN proxycheck judge), the same on every later start', async () => {
    const dir = tmp();
    const first = await readOrCreateJudgeCertificate(dir);
    expect(first.created).toBe(true);
    const path = join(dir, JUDGE_CERT_FILE);
    expect(first.path).toBe(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const x = new X509Certificate(first.cert);
    expect(x.subject).toBe('CN=proxycheck judge');
    expect(x.publicKey.asymmetricKeyType).toBe('ec');
    expect(first.fingerprint).toBe(x.fingerprint256);
    expect(new Date(x.validTo).getTime()).toBeGreaterThan(Date.now() + 19 * 365 * 86_400_000);
    const again = await readOrCreateJudgeCertificate(dir);
    expect(again).toEqual({ ...first, created: false });
    expect(readFileSync(path, 'utf8')).toBe(`${first.key.trim()}\n${first.cert.trim()}\n`);
  });

  test('a file without a key or a certificate is an error naming it (never silently replaced)', async () => {
    const dir = tmp();
    writeFileSync(join(dir, JUDGE_CERT_FILE), 'not a pem');
    await expect(readOrCreateJudgeCertificate(dir)).rejects.toMatchObject({ code: 'judge_cert_invalid' });
    expect(() => parseJudgeCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'x.pem')).toThrow('x.pem must hold a PEM private key and certificate');
  });

  test('two starts at once end up with one certificate', async () => {
    const dir = tmp();
    const [a, b] = await Promise.all([readOrCreateJudgeCertificate(dir), readOrCreateJudgeCertificate(dir)]);
    expect(a.fingerprint).toBe(b.fingerprint);
  });
});

describe('the TLS listener and the direct check', () => {
  test('the raw judge over TLS presents the certificate, signs like the plain judge; the check passes with its pin', async () => {
    const cert = await readOrCreateJudgeCertificate(tmp());
    const server = await startJudgeServer({ key: 'tls-judge-key-0123456789', tls: { key: cert.key, cert: cert.cert } });
    try {
      expect(server.url.startsWith('https://127.0.0.1:')).toBe(true);
      const target: TlsJudgeTarget = { ...parseJudgeUrl(server.url), protocol: 'https:', fingerprint: cert.fingerprint, key: 'tls-judge-key-0123456789' };
      expect(await checkTlsJudge(target)).toEqual({ ok: true });
      // another key: reachable, but its answers would not verify
      expect(await checkTlsJudge({ ...target, key: 'some-other-key-0123456789' })).toEqual({ ok: false, reason: 'the answer is not signed with the judge key' });
      // another pin: the start must stop, naming what the judge presents
      const wrong = 'AB:'.repeat(31) + 'AB';
      await expect(checkTlsJudge({ ...target, fingerprint: wrong })).rejects.toMatchObject({ code: 'judge_tls_mismatch' });
      await expect(checkTlsJudge({ ...target, fingerprint: wrong })).rejects.toThrow(cert.fingerprint);
    } finally {
      await server.close();
    }
  });

  test('an unreachable TLS judge is not ok, with the reason (a warning at start, not an error)', async () => {
    const port = await refusedPort();
    const r = await checkTlsJudge({ ...parseJudgeUrl(`https://127.0.0.1:${port}/judge`), protocol: 'https:', fingerprint: 'AB:'.repeat(31) + 'AB' }, 1000);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.reason.startsWith('connect_refused')).toBe(true);
  });
});
