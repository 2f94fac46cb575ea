/** src/probe/codec/cert-pin.ts: fingerprint forms, comparison, subjects, the tls_intercepted error. */
import { describe, expect, test } from 'bun:test';
import { createHash, X509Certificate } from 'node:crypto';
import { fingerprintOfDer, formatSubject, interceptedError, normalizeFingerprint, pemCertificateDer, sameFingerprint } from '../../src/probe/codec/cert-pin';
import { TEST_CERT } from '../fixtures/tls-cert';

const HEX = 'a1'.repeat(16) + '0f'.repeat(16);
const CANONICAL = HEX.toUpperCase().match(/../g)!.join(':');

describe('normalizeFingerprint', () => {
  test('hex with or without colons, any case, optional sha256 prefixes -> upper-case pairs joined by ":"', () => {
    for (const f of [HEX, HEX.toUpperCase(), CANONICAL, CANONICAL.toLowerCase(), `sha256:${HEX}`, `SHA256 Fingerprint=${CANONICAL}`, `  ${HEX}\n`]) {
      expect(normalizeFingerprint(f)).toBe(CANONICAL);
    }
  });

  test('anything else is null: wrong length, non-hex, misplaced colons, SHA-1 length', () => {
    for (const f of ['', HEX.slice(2), `${HEX}00`, 'g'.repeat(64), `${HEX.slice(0, 3)}:${HEX.slice(3)}`, 'ab:'.repeat(20).slice(0, -1), `sha1:${HEX}`]) {
      expect(normalizeFingerprint(f)).toBeNull();
    }
  });

  test('sameFingerprint compares forms, never an invalid one', () => {
    expect(sameFingerprint(HEX, CANONICAL)).toBe(true);
    expect(sameFingerprint(HEX, CANONICAL.replace(/^A1/, 'A2'))).toBe(false);
    expect(sameFingerprint('x', 'x')).toBe(false);
  });
});

describe('fingerprints of certificates', () => {
  test('SHA-256 of the DER, as openssl / node print it', () => {
    const der = pemCertificateDer(TEST_CERT)!;
    expect(fingerprintOfDer(der)).toBe(new X509Certificate(TEST_CERT).fingerprint256);
    expect(fingerprintOfDer(der).replaceAll(':', '').toLowerCase()).toBe(createHash('sha256').update(der).digest('hex'));
  });

  test('pemCertificateDer: the first certificate block; null without one', () => {
    expect(pemCertificateDer(`junk\n${TEST_CERT}${TEST_CERT}`)?.length).toBe(new X509Certificate(TEST_CERT).raw.length);
    expect(pemCertificateDer('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----')).toBeNull();
    expect(pemCertificateDer('-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----')).toBeNull();
  });
});

describe('formatSubject', () => {
  test('key=value pairs in order, repeated attributes each, not-a-subject -> ""', () => {
    expect(formatSubject({ CN: 'judge', O: ['a', 'b'] })).toBe('CN=judge, O=a, O=b');
    expect(formatSubject(Object.assign(Object.create(null), { C: 'DE', CN: 'x' }))).toBe('C=DE, CN=x');
    expect(formatSubject(undefined)).toBe('');
    expect(formatSubject('CN=x')).toBe('');
  });

  test('text the proxy chose is kept printable and bounded', () => {
    expect(formatSubject({ CN: 'a\u0000b\u00e9\n' })).toBe('CN=a?b??');
    const long = formatSubject({ CN: 'x'.repeat(1000) });
    expect(long.length).toBe(256);
    expect(long.endsWith('...')).toBe(true);
  });
});

describe('interceptedError', () => {
  test('code, a message naming subject and fingerprint, and the certificate', () => {
    const e = interceptedError({ subject: 'CN=mitm', fingerprint: CANONICAL });
    expect(e.code).toBe('tls_intercepted');
    expect(e.message).toContain('"CN=mitm"');
    expect(e.message).toContain(CANONICAL);
    expect(e.certificate).toEqual({ subject: 'CN=mitm', fingerprint: CANONICAL });
    expect(interceptedError({ subject: '', fingerprint: CANONICAL }).message).toContain('a certificate without a subject');
  });
});
