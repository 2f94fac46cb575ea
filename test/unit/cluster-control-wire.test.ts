/**
 * Tests for src/cluster/control-wire.ts: the control subject is one token
 * per node (anything else is refused), requests and replies round-trip, and
 * the decoders return null (never throw) for anything the encoders cannot
 * produce: hand-picked cases and fast-check fuzz (random bytes, random JSON).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  CONTROL_SUBJECT_PREFIX,
  CONTROL_WIRE_VERSION,
  controlSubject,
  decodeControlReply,
  decodeControlRequest,
  encodeControl,
  type ControlReply,
  type ControlRequest,
} from '../../src/cluster/control-wire';

const json = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));

describe('controlSubject', () => {
  test('a node id is one token after the prefix', () => {
    expect(controlSubject('api-1')).toBe(`${CONTROL_SUBJECT_PREFIX}api-1`);
    expect(controlSubject('api-1').split('.')).toHaveLength(3);
  });
  test.each(['', 'a.b', 'a*', '>', 'a b', 'x'.repeat(65)])('%j is refused', (node) => {
    expect(() => controlSubject(node)).toThrow();
  });
});

describe('round trips', () => {
  test('requests', () => {
    for (const op of ['progress', 'cancel'] as const) {
      const m: ControlRequest = { v: CONTROL_WIRE_VERSION, op, run: 'run_abcdefghijklmnop' };
      expect(decodeControlRequest(encodeControl(m))).toEqual(m);
    }
  });
  test('replies', () => {
    const replies: ControlReply[] = [
      { v: CONTROL_WIRE_VERSION, state: 'running', checked: 3, total: 10, working: 1 },
      { v: CONTROL_WIRE_VERSION, state: 'completed' },
      { v: CONTROL_WIRE_VERSION, state: 'failed' },
      { v: CONTROL_WIRE_VERSION, state: 'not_running' },
    ];
    for (const r of replies) expect(decodeControlReply(encodeControl(r))).toEqual(r);
  });
});

describe('malformed input is null', () => {
  test.each([
    { v: 2, op: 'cancel', run: 'r' },
    { v: 1, op: 'delete', run: 'r' },
    { v: 1, op: 'cancel', run: '' },
    { v: 1, op: 'cancel', run: 7 },
    { v: 1, op: 'cancel', run: 'r'.repeat(257) },
    [1, 'cancel', 'r'],
    null,
  ])('request %j', (m) => {
    expect(decodeControlRequest(json(m))).toBeNull();
  });
  test.each([
    { v: 1, state: 'running', checked: -1, total: 1, working: 0 },
    { v: 1, state: 'running', checked: 1.5, total: 1, working: 0 },
    { v: 1, state: 'running', checked: 1, total: 1 },
    { v: 1, state: 'cancelled' },
    { v: 0, state: 'failed' },
    'failed',
  ])('reply %j', (m) => {
    expect(decodeControlReply(json(m))).toBeNull();
  });
  test('fuzz: bytes and JSON never throw; whatever decodes re-encodes to itself', () => {
    const check = (bytes: Uint8Array) => {
      const q = decodeControlRequest(bytes);
      if (q !== null) expect(decodeControlRequest(encodeControl(q))).toEqual(q);
      const r = decodeControlReply(bytes);
      if (r !== null) expect(decodeControlReply(encodeControl(r))).toEqual(r);
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), check));
    fc.assert(fc.property(fc.jsonValue(), (v) => check(json(v))));
    const near = fc.record({
      v: fc.constantFrom(0, 1, 2, '1'),
      op: fc.constantFrom('progress', 'cancel', 'other', 1),
      run: fc.oneof(fc.string({ maxLength: 300 }), fc.integer()),
      state: fc.constantFrom('running', 'completed', 'failed', 'not_running', 'x'),
      checked: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double()),
      total: fc.integer({ min: -1, max: 5 }),
      working: fc.integer({ min: 0, max: 5 }),
    });
    fc.assert(fc.property(near, (m) => check(json(m))));
  });
});
