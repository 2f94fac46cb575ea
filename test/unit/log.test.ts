/**
 * Tests for src/log.ts: level filtering, the JSON line shape, child loggers'
 * fields, Error and bigint serialisation, the default sink's stream choice and
 * memoryLogger.
 */
import { describe, expect, spyOn, test } from 'bun:test';
import type { LogLevel } from '../../src/config';
import { createLogger, memoryLogger, type LogSink } from '../../src/log';

function capture(): { sink: LogSink; out: { level: LogLevel; obj: Record<string, unknown>; line: string }[] } {
  const out: { level: LogLevel; obj: Record<string, unknown>; line: string }[] = [];
  return { out, sink: (line, level) => void out.push({ level, line, obj: JSON.parse(line) as Record<string, unknown> }) };
}

const call = (l: ReturnType<typeof createLogger>) => {
  l.debug('d');
  l.info('i');
  l.warn('w');
  l.error('e');
};

describe('levels', () => {
  const cases: [LogLevel, string[]][] = [
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ];
  for (const [min, expected] of cases) {
    test(`minimum ${min}`, () => {
      const { sink, out } = capture();
      call(createLogger(min, sink));
      expect(out.map((o) => o.level)).toEqual(expected as LogLevel[]);
      expect(out.map((o) => o.obj.level)).toEqual(expected);
    });
  }

  test('always() writes whatever the minimum, silent too, as an info line', () => {
    for (const min of ['debug', 'info', 'warn', 'error', 'silent'] as LogLevel[]) {
      const { sink, out } = capture();
      const l = createLogger(min, sink);
      l.always('the demo key', { k: 1 });
      l.info('filtered unless info or below');
      expect(out[0]).toMatchObject({ level: 'info', obj: { level: 'info', msg: 'the demo key', k: 1 } });
    }
  });

  test('default minimum is info', () => {
    const { sink, out } = capture();
    call(createLogger(undefined, sink));
    expect(out.map((o) => o.level)).toEqual(['info', 'warn', 'error']);
  });

  test('children keep the parent\'s minimum level', () => {
    const { sink, out } = capture();
    call(createLogger('warn', sink).child({ a: 1 }).child({ b: 2 }));
    expect(out.map((o) => o.level)).toEqual(['warn', 'error']);
  });
});

describe('line shape', () => {
  test('one JSON object per call, on one line, with time, level, msg and fields', () => {
    const { sink, out } = capture();
    const before = Date.now();
    createLogger('debug', sink).info('job done', { jobId: 'j1', count: 3, nested: { ok: true }, list: [1, 'x'] });
    const after = Date.now();
    expect(out).toHaveLength(1);
    const { obj, line } = out[0]!;
    expect(line).not.toContain('\n');
    expect(Object.keys(obj).slice(0, 3)).toEqual(['time', 'level', 'msg']);
    expect(obj).toEqual({
      time: expect.any(String),
      level: 'info',
      msg: 'job done',
      jobId: 'j1',
      count: 3,
      nested: { ok: true },
      list: [1, 'x'],
    });
    const t = Date.parse(obj.time as string);
    expect(obj.time).toBe(new Date(t).toISOString());
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
  });

  test('newlines in messages and fields stay escaped inside the one line', () => {
    const { sink, out } = capture();
    createLogger('info', sink).warn('line1\nline2', { text: 'a\r\nb' });
    expect(out[0]!.line.split('\n')).toHaveLength(1);
    expect(out[0]!.obj).toMatchObject({ msg: 'line1\nline2', text: 'a\r\nb' });
  });

  test('undefined fields are omitted; bigint becomes a number', () => {
    const { sink, out } = capture();
    createLogger('info', sink).info('m', { gone: undefined, big: 12345678901n, zero: 0n });
    expect(out[0]!.obj).not.toHaveProperty('gone');
    expect(out[0]!.obj).toMatchObject({ big: 12345678901, zero: 0 });
  });
});

describe('child loggers', () => {
  test('add their fields to every line; call fields win over child fields; nesting merges', () => {
    const { sink, out } = capture();
    const root = createLogger('debug', sink);
    const job = root.child({ jobId: 'j9', region: 'us1' });
    const shard = job.child({ shard: 2, region: 'sg1' });
    job.info('a');
    shard.debug('b');
    shard.error('c', { shard: 3, extra: true });
    root.info('d');
    expect(out.map((o) => o.obj)).toEqual([
      expect.objectContaining({ msg: 'a', jobId: 'j9', region: 'us1' }),
      expect.objectContaining({ msg: 'b', jobId: 'j9', region: 'sg1', shard: 2 }),
      expect.objectContaining({ msg: 'c', jobId: 'j9', region: 'sg1', shard: 3, extra: true }),
      expect.objectContaining({ msg: 'd' }),
    ]);
    expect(out[0]!.obj).not.toHaveProperty('shard');
    expect(out[3]!.obj).not.toHaveProperty('jobId');
  });

  test('the fields object passed to child() is copied', () => {
    const { sink, out } = capture();
    const fields: Record<string, unknown> = { a: 1 };
    const child = createLogger('info', sink).child(fields);
    fields.a = 2;
    fields.b = 3;
    child.info('x');
    expect(out[0]!.obj).toMatchObject({ a: 1 });
    expect(out[0]!.obj).not.toHaveProperty('b');
  });
});

describe('Error serialisation', () => {
  test('an Error field becomes {name, message, stack} (code and cause when present)', () => {
    const { sink, out } = capture();
    const log = createLogger('info', sink);
    log.error('plain', { err: new Error('boom') });
    const e1 = out[0]!.obj.err as Record<string, unknown>;
    expect(e1).toEqual({ name: 'Error', message: 'boom', stack: expect.stringContaining('boom') });

    const withCode = Object.assign(new RangeError('out of range', { cause: new Error('root cause') }), { code: 'bad_range' });
    log.error('coded', { err: withCode });
    const e2 = out[1]!.obj.err as Record<string, unknown>;
    expect(e2).toMatchObject({ name: 'RangeError', message: 'out of range', code: 'bad_range' });
    expect(e2.cause).toEqual({ name: 'Error', message: 'root cause', stack: expect.any(String) });
  });

  test('custom error classes keep their name; errors nested in arrays and objects are serialised too', () => {
    class ProbeFailure extends Error {
      readonly code = 'connect_refused';
      constructor(msg: string) {
        super(msg);
        this.name = 'ProbeFailure';
      }
    }
    const { sink, out } = capture();
    createLogger('info', sink).warn('many', { errs: [new ProbeFailure('p1')], wrap: { inner: new TypeError('t') } });
    const obj = out[0]!.obj as { errs: Record<string, unknown>[]; wrap: { inner: Record<string, unknown> } };
    expect(obj.errs[0]).toMatchObject({ name: 'ProbeFailure', message: 'p1', code: 'connect_refused' });
    expect(obj.wrap.inner).toMatchObject({ name: 'TypeError', message: 't' });
  });

  test('a non-Error cause is kept as is', () => {
    const { sink, out } = capture();
    createLogger('info', sink).error('x', { err: new Error('outer', { cause: { status: 500 } }) });
    expect((out[0]!.obj.err as Record<string, unknown>).cause).toEqual({ status: 500 });
  });
});

describe('robustness', () => {
  test('fields named time, level or msg cannot falsify the line', () => {
    const { sink, out } = capture();
    createLogger('info', sink).child({ level: 'error' }).info('real', { time: 'then', msg: 'fake' });
    expect(out[0]!.level).toBe('info');
    expect(out[0]!.obj).toMatchObject({ level: 'info', msg: 'real' });
    expect(out[0]!.obj.time).not.toBe('then');
    expect(Object.keys(out[0]!.obj)).toEqual(['time', 'level', 'msg']);
  });

  test('a cause cycle is cut ("[Circular]"), not a stack overflow', () => {
    const { sink, out } = capture();
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as Error & { cause?: unknown }).cause = b;
    createLogger('info', sink).error('cycle', { err: a }); // a cycle followed would overflow the stack and throw here
    expect(out[0]!.obj.err).toMatchObject({ message: 'a', cause: { message: 'b', cause: '[Circular]' } });
  });

  test('the same error twice in one line is written once, then referenced', () => {
    const { sink, out } = capture();
    const e = new Error('same');
    createLogger('info', sink).warn('twice', { first: e, second: e });
    expect(out[0]!.obj).toMatchObject({ first: { message: 'same' }, second: '[Circular]' });
  });

  test('cyclic plain fields do not throw: the line says so and keeps time, level and msg', () => {
    const { sink, out } = capture();
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    expect(() => createLogger('info', sink).error('cyclic', { o })).not.toThrow();
    expect(out[0]!.level).toBe('error');
    expect(out[0]!.obj).toEqual({
      time: expect.any(String),
      level: 'error',
      msg: 'cyclic',
      log_error: expect.stringMatching(/^fields not serialisable: /),
    });
  });
});

describe('default sink', () => {
  test('debug and info go to stdout, warn and error to stderr', () => {
    const outLines: string[] = [];
    const errLines: string[] = [];
    const so = spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
      outLines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write);
    const se = spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown) => {
      errLines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write);
    try {
      call(createLogger('debug'));
    } finally {
      so.mockRestore();
      se.mockRestore();
    }
    const msgs = (lines: string[]) =>
      lines.map((l) => {
        expect(l.endsWith('\n')).toBe(true);
        return (JSON.parse(l) as { msg: string }).msg;
      });
    expect(msgs(outLines)).toEqual(['d', 'i']);
    expect(msgs(errLines)).toEqual(['w', 'e']);
  });
});

describe('memoryLogger', () => {
  test('keeps parsed lines in order, default level debug, shared with children', () => {
    const log = memoryLogger();
    log.debug('one', { n: 1 });
    log.child({ jobId: 'j' }).info('two');
    log.error('three', { err: new Error('x') });
    expect(log.lines.map((l) => l.msg)).toEqual(['one', 'two', 'three']);
    expect(log.lines[0]).toMatchObject({ level: 'debug', n: 1 });
    expect(log.lines[1]).toMatchObject({ level: 'info', jobId: 'j' });
    expect(log.lines[2]).toMatchObject({ level: 'error', err: { name: 'Error', message: 'x' } });
  });

  test('respects its level', () => {
    const log = memoryLogger('warn');
    call(log);
    expect(log.lines.map((l) => l.level)).toEqual(['warn', 'error']);
    const silent = memoryLogger('silent');
    call(silent);
    expect(silent.lines).toEqual([]);
  });
});
