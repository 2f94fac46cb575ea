/**
 * Tests for src/cluster/progress-wire.ts: every valid jobId is one safe subject
 * token (and anything else is refused), encode/decode round-trips real states,
 * a final survives only on a completed/failed state, and the decoder returns
 * null (never throws) for malformed input: hand-picked cases and fast-check
 * fuzz (random bytes, random JSON, single-field mutations of a valid message).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  decodeProgressWire,
  encodeProgressWire,
  MAX_WIRE_BYTES,
  progressSubject,
  PROGRESS_SUBJECT_PREFIX,
  type ProgressWire,
} from '../../src/cluster/progress-wire';
import { isJobId } from '../../src/job-id';
import { PROGRESS_PHASES, type ProgressPhase, type ProgressState } from '../../src/jobs/progress';

const enc = new TextEncoder();
const json = (x: unknown) => enc.encode(JSON.stringify(x));

function state(phase: ProgressPhase, extra: Partial<ProgressState> = {}): ProgressState {
  return { jobId: 'job_1', phase, total: 100, checked: 40, working: 12, hasCustomUrls: false, probeStartedAt: 1_700_000_000_000, now: 1_700_000_001_000, ...extra };
}

const valid = (): ProgressWire => JSON.parse(new TextDecoder().decode(encodeProgressWire('node-a', 'acct-1', state('completed'), { resultUrl: 'http://10.0.0.1:3000/result/r.json?token=t' })));

describe('progressSubject', () => {
  test('every valid jobId is one token with no wildcard or separator', () => {
    const jobIdArb = fc.stringMatching(/^[A-Za-z0-9_-]{3,64}$/);
    fc.assert(
      fc.property(jobIdArb, (id) => {
        const s = progressSubject(id);
        expect(s.startsWith(PROGRESS_SUBJECT_PREFIX)).toBe(true);
        const token = s.slice(PROGRESS_SUBJECT_PREFIX.length);
        expect(token).toBe(id);
        expect(/[.*> \t\r\n]/.test(token)).toBe(false);
        expect(s.split('.')).toHaveLength(3);
      }),
    );
  });

  test('refuses what is not a jobId', () => {
    for (const bad of ['a.b.c', 'job*', 'job>', 'has space', 'ab', 'x'.repeat(65), '', 'ümlaut', 'a\nbc']) {
      expect(isJobId(bad)).toBe(false);
      expect(() => progressSubject(bad)).toThrow();
    }
  });
});

describe('encode / decode', () => {
  test('round-trips in-progress and final states, with every optional field', () => {
    const states: ProgressState[] = [
      state('validating', { total: 0, checked: 0, working: 0, probeStartedAt: null }),
      state('probing', { batchSize: 50 }),
      state('custom_url_validation', { hasCustomUrls: true, customChecked: 3, customTotal: 9, customStartedAt: 1_700_000_000_500 }),
      state('failed', { failedIn: 'probing', message: 'Failed: out of time' }),
      state('completed'),
    ];
    for (const s of states) {
      const final = s.phase === 'completed' ? { resultUrl: 'https://x.example/result/a.json?token=1' } : s.phase === 'failed' ? { resultUrl: null } : null;
      const w = decodeProgressWire(encodeProgressWire('node-a', 'acct-1', s, final));
      expect(w).toEqual({ v: 1, node: 'node-a', owner: 'acct-1', state: s, final });
    }
  });

  test('a final given with a non-terminal state is not sent', () => {
    const w = decodeProgressWire(encodeProgressWire('n1', 'acct', state('probing'), { resultUrl: 'http://x/y' }));
    expect(w?.final).toBeNull();
  });

  test('a terminal state may come without a final (resultUrl then null on the hub)', () => {
    expect(decodeProgressWire(encodeProgressWire('n1', 'acct', state('failed'), null))?.final).toBeNull();
  });

  test('the decoded state carries no field the encoder did not put there', () => {
    const m = valid() as unknown as { state: Record<string, unknown> };
    m.state.extra = 'x';
    expect(Object.keys(decodeProgressWire(json(m))!.state)).not.toContain('extra');
  });
});

describe('decoder rejects malformed input', () => {
  const cases: [string, (m: Record<string, any>) => void][] = [
    ['wrong version', (m) => (m.v = 2)],
    ['node with a dot', (m) => (m.node = 'a.b')],
    ['node missing', (m) => delete m.node],
    ['empty owner', (m) => (m.owner = '')],
    ['owner not a string', (m) => (m.owner = 7)],
    ['owner too long', (m) => (m.owner = 'a'.repeat(129))],
    ['state missing', (m) => delete m.state],
    ['state an array', (m) => (m.state = [])],
    ['bad jobId', (m) => (m.state.jobId = 'a.b.*')],
    ['unknown phase', (m) => (m.state.phase = 'dancing')],
    ['failedIn completed', (m) => (m.state.failedIn = 'completed')],
    ['negative checked', (m) => (m.state.checked = -1)],
    ['fractional total', (m) => (m.state.total = 1.5)],
    ['NaN-ish now', (m) => (m.state.now = 'soon')],
    ['hasCustomUrls not boolean', (m) => (m.state.hasCustomUrls = 1)],
    ['batchSize 0', (m) => (m.state.batchSize = 0)],
    ['probeStartedAt text', (m) => (m.state.probeStartedAt = 'x')],
    ['message too long', (m) => (m.state.message = 'm'.repeat(2049))],
    ['final missing', (m) => delete m.final],
    ['final on in-progress', (m) => (m.state.phase = 'probing')],
    ['final not an object', (m) => (m.final = 'yes')],
    ['resultUrl not http', (m) => (m.final.resultUrl = 'javascript:alert(1)')],
    ['resultUrl a number', (m) => (m.final.resultUrl = 5)],
  ];
  for (const [name, mutate] of cases) {
    test(name, () => {
      const m = valid() as unknown as Record<string, any>;
      mutate(m);
      expect(decodeProgressWire(json(m))).toBeNull();
    });
  }

  test('not JSON, not UTF-8, not an object, too big', () => {
    expect(decodeProgressWire(enc.encode('{'))).toBeNull();
    expect(decodeProgressWire(new Uint8Array([0xff, 0xfe, 0x7b]))).toBeNull();
    expect(decodeProgressWire(json(null))).toBeNull();
    expect(decodeProgressWire(json([1, 2]))).toBeNull();
    const big = valid() as unknown as Record<string, any>;
    big.pad = 'x'.repeat(MAX_WIRE_BYTES);
    expect(decodeProgressWire(json(big))).toBeNull();
  });

  test('fuzz: random bytes and random JSON never throw and never decode', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (b) => {
        expect(decodeProgressWire(b)).toBeNull();
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(decodeProgressWire(json(v))).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  test('fuzz: replacing any one field of a valid message with junk decodes to null or to a well-formed message', () => {
    const paths = ['v', 'node', 'owner', 'final', 'state.jobId', 'state.phase', 'state.total', 'state.checked', 'state.working', 'state.hasCustomUrls', 'state.now', 'state.failedIn', 'state.batchSize', 'state.message', 'final.resultUrl'];
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), (path, junk) => {
        const m = valid() as unknown as Record<string, any>;
        const [a, b] = path.split('.');
        if (b === undefined) m[a!] = junk;
        else if (m[a!] !== null && typeof m[a!] === 'object') m[a!][b] = junk;
        const w = decodeProgressWire(json(m));
        if (w === null) return;
        // Whatever got through is well-formed: it re-encodes to itself.
        expect(decodeProgressWire(encodeProgressWire(w.node, w.owner, w.state, w.final))).toEqual(w);
        expect(isJobId(w.state.jobId)).toBe(true);
        expect(Object.values(PROGRESS_PHASES)).toContain(w.state.phase);
        expect(w.final === null || w.state.phase === 'completed' || w.state.phase === 'failed').toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
