/**
 * Tests for src/http/body.ts: the byte limit by Content-Length (nothing read)
 * and by streamed bytes for a chunked body (the stream is cancelled), the
 * exact 413 body, UTF-8 split across chunks, and empty bodies; the gate for
 * large bodies (a slot per body over its size, 503 when none is free).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError, payloadTooLarge, tooManyLargeBodies } from '../../src/http/api-errors';
import { LARGE_BODY_RETRY_AFTER_S, LargeBodyGate, readBodyText, readHeldBody, releaseBody, withBodyText } from '../../src/http/body';

const URL_ = 'http://127.0.0.1/check-raw';

/** A chunked body: yields `chunks` one per pull, records pulls and cancel. */
function streamOf(chunks: Uint8Array[]) {
  const st = { pulls: 0, cancelled: false };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      st.pulls++;
      const next = chunks[i++];
      if (next === undefined) c.close();
      else c.enqueue(next);
    },
    cancel() {
      st.cancelled = true;
    },
  });
  return { stream, st };
}

function post(body: RequestInit['body'], headers: Record<string, string> = {}): Request {
  return new Request(URL_, { method: 'POST', body, headers });
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ApiError);
  return caught as ApiError;
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('within the limit', () => {
  test('a string body is returned as text', async () => {
    expect(await readBodyText(post('1.2.3.4:80\n5.6.7.8:3128'), 1024)).toBe('1.2.3.4:80\n5.6.7.8:3128');
  });

  test('no body or an empty body gives ""', async () => {
    expect(await readBodyText(new Request(URL_, { method: 'POST' }), 10)).toBe('');
    expect(await readBodyText(post(''), 10)).toBe('');
    const { stream } = streamOf([]);
    expect(await readBodyText(post(stream), 10)).toBe('');
  });

  test('exactly maxBytes is accepted (string and stream)', async () => {
    expect(await readBodyText(post('x'.repeat(100)), 100)).toBe('x'.repeat(100));
    const { stream } = streamOf([enc('x'.repeat(60)), enc('y'.repeat(40))]);
    expect(await readBodyText(post(stream), 100)).toBe('x'.repeat(60) + 'y'.repeat(40));
  });

  test('a multi-byte character split across chunks decodes correctly (limit counts bytes)', async () => {
    const bytes = enc('é€😀 ok');
    expect(bytes.length).toBe(12);
    const { stream } = streamOf([bytes.slice(0, 1), bytes.slice(1, 3), bytes.slice(3, 6), bytes.slice(6)]);
    expect(await readBodyText(post(stream), 12)).toBe('é€😀 ok');
    const again = streamOf([bytes.slice(0, 5), bytes.slice(5)]);
    const err = await rejection(readBodyText(post(again.stream), 11));
    expect(err.status).toBe(413);
  });

  test('any split of any text reads back the same text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), async (s, cuts) => {
        const bytes = enc(s);
        const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let prev = 0;
        for (const p of [...points, bytes.length]) {
          if (p > prev) chunks.push(bytes.slice(prev, p));
          prev = Math.max(prev, p);
        }
        const { stream } = streamOf(chunks);
        expect(await readBodyText(post(stream), bytes.length)).toBe(s);
      }),
      { numRuns: 100 },
    );
  });

  test('a declared Content-Length within the limit (or malformed) does not stop reading', async () => {
    const { stream } = streamOf([enc('abc')]);
    expect(await readBodyText(post(stream, { 'content-length': '3' }), 3)).toBe('abc');
    const odd = streamOf([enc('abc')]);
    expect(await readBodyText(post(odd.stream, { 'content-length': 'banana' }), 3)).toBe('abc');
  });
});

describe('over the limit', () => {
  test('by Content-Length: 413 before a byte is read', async () => {
    const { stream, st } = streamOf([enc('x'.repeat(10))]);
    const err = await rejection(readBodyText(post(stream, { 'content-length': '1025' }), 1024));
    expect(err.status).toBe(413);
    expect(err.body).toStrictEqual({ error: 'Payload too large', message: 'The request body may be at most 1024 bytes (server setting MAX_BODY_BYTES)', max: 1024 });
    expect(st.pulls).toBeLessThanOrEqual(1); // at most the stream's own start-up pull
    expect(st.cancelled).toBe(false);
  });

  test('a Content-Length that lies low does not let a bigger body through', async () => {
    const { stream, st } = streamOf([enc('x'.repeat(8)), enc('x'.repeat(8)), enc('x'.repeat(8))]);
    const err = await rejection(readBodyText(post(stream, { 'content-length': '4' }), 10));
    expect(err.body).toStrictEqual(payloadTooLarge(10).body);
    expect(st.cancelled).toBe(true);
  });

  test('by streamed bytes (chunked, no Content-Length): 413 and the stream is cancelled early', async () => {
    const chunk = new Uint8Array(1000).fill(0x61);
    const chunks = Array.from({ length: 1000 }, () => chunk);
    const { stream, st } = streamOf(chunks);
    const req = post(stream);
    expect(req.headers.get('content-length')).toBeNull();
    const err = await rejection(readBodyText(req, 16 * 1024));
    expect(err.status).toBe(413);
    expect(err.body).toStrictEqual({
      error: 'Payload too large',
      message: `The request body may be at most ${16 * 1024} bytes (server setting MAX_BODY_BYTES)`,
      max: 16 * 1024,
    });
    expect(err.body).toStrictEqual(payloadTooLarge(16 * 1024).body);
    expect(st.cancelled).toBe(true);
    expect(st.pulls).toBeLessThan(20);
  });

  test('one byte over in the last chunk is refused', async () => {
    const { stream } = streamOf([enc('x'.repeat(50)), enc('x'.repeat(51))]);
    const err = await rejection(readBodyText(post(stream), 100));
    expect(err.body.max).toBe(100);
  });
});

describe('LargeBodyGate', () => {
  test('slots are counted; one more is the 503 with Retry-After; a release gives back one slot, once', () => {
    const gate = new LargeBodyGate(2, 100);
    const a = gate.enter();
    const b = gate.enter();
    expect(gate.busy).toBe(2);
    let err: unknown;
    try {
      gate.enter();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect((err as ApiError).body).toStrictEqual(tooManyLargeBodies(LARGE_BODY_RETRY_AFTER_S).body);
    expect((err as ApiError).headers).toStrictEqual({ 'Retry-After': '1' });
    a();
    a();
    expect(gate.busy).toBe(1);
    gate.enter();
    expect(gate.busy).toBe(2);
    b();
    expect(gate.busy).toBe(1);
  });
});

describe('withBodyText: large bodies take a slot', () => {
  const full = () => {
    const gate = new LargeBodyGate(1, 100);
    gate.enter();
    return gate;
  };

  test('a small body never needs a slot, even with every slot taken', async () => {
    expect(await withBodyText(post('x'.repeat(100)), { maxBytes: 1000, gate: full() }, (t) => t.length)).toBe(100);
    const { stream } = streamOf([enc('x'.repeat(60)), enc('x'.repeat(40))]);
    expect(await withBodyText(post(stream), { maxBytes: 1000, gate: full() }, (t) => t.length)).toBe(100);
  });

  test('a declared large body with every slot taken: 503 before a byte is read', async () => {
    const { stream, st } = streamOf([enc('x'.repeat(200))]);
    let used = false;
    const err = await rejection(
      withBodyText(post(stream, { 'content-length': '200' }), { maxBytes: 1000, gate: full() }, () => (used = true)),
    );
    expect(err.status).toBe(503);
    expect(st.pulls).toBeLessThanOrEqual(1);
    expect(used).toBe(false);
  });

  test('a chunked body that grows past the size with every slot taken: 503, the stream cancelled', async () => {
    const chunks = Array.from({ length: 50 }, () => enc('x'.repeat(30)));
    const { stream, st } = streamOf(chunks);
    const err = await rejection(withBodyText(post(stream), { maxBytes: 10_000, gate: full() }, () => 0));
    expect(err.status).toBe(503);
    expect(st.cancelled).toBe(true);
    expect(st.pulls).toBeLessThan(10);
  });

  test('the slot is held while the body is used, and given back after, also when use throws', async () => {
    const gate = new LargeBodyGate(1, 100);
    const seen: number[] = [];
    await withBodyText(post('x'.repeat(101)), { maxBytes: 1000, gate }, () => seen.push(gate.busy));
    expect(seen).toEqual([1]);
    expect(gate.busy).toBe(0);
    const err = await rejection(
      withBodyText(post('x'.repeat(101)), { maxBytes: 1000, gate }, () => {
        throw payloadTooLarge(1);
      }),
    );
    expect(err.status).toBe(413);
    expect(gate.busy).toBe(0);
  });

  test('a 413 by size frees the slot it took', async () => {
    const gate = new LargeBodyGate(1, 100);
    const { stream } = streamOf([enc('x'.repeat(150)), enc('x'.repeat(150))]);
    expect((await rejection(withBodyText(post(stream), { maxBytes: 200, gate }, () => 0))).status).toBe(413);
    expect(gate.busy).toBe(0);
  });
});

describe('readHeldBody: the slot of a large body is held for the request until releaseBody', () => {
  const post = (body: string) => new Request(URL_, { method: 'POST', body });

  test('held after the read, given back once by releaseBody; a small body takes none', async () => {
    const gate = new LargeBodyGate(1, 10);
    const r = post('x'.repeat(11));
    expect(await readHeldBody(r, { maxBytes: 100, gate })).toBe('x'.repeat(11));
    expect(gate.busy).toBe(1);
    expect(() => gate.enter()).toThrow(ApiError);
    releaseBody(r);
    releaseBody(r);
    expect(gate.busy).toBe(0);
    await readHeldBody(post('small'), { maxBytes: 100, gate });
    expect(gate.busy).toBe(0);
  });

  test('a body refused while it is read (413) gives its slot back at once', async () => {
    const gate = new LargeBodyGate(1, 10);
    const r = new Request(URL_, { method: 'POST', body: streamOf([new Uint8Array(20), new Uint8Array(200)]).stream, duplex: 'half' } as RequestInit);
    await expect(readHeldBody(r, { maxBytes: 100, gate })).rejects.toEqual(payloadTooLarge(100));
    expect(gate.busy).toBe(0);
  });
});
