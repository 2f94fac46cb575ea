/** Tests for src/cli/progress-bar.ts: the tracker (phase, rate, ETA), the TTY bar, plain lines and their throttle. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  PHASES,
  PlainThrottle,
  ProgressTracker,
  barCells,
  fmtClock,
  fmtRate,
  phaseOf,
  renderBar,
  renderPlain,
  type ProgressInput,
  type ProgressView,
} from '../../src/cli/progress-bar';

const msg = (currentStep: string, checked: number, total: number, working: number, over: Partial<ProgressInput> = {}): ProgressInput => ({
  status: 'in_progress',
  currentStep,
  progress: 50,
  eta: null,
  details: { checked, total, working_so_far: working },
  ...over,
});

const view = (over: Partial<ProgressView> = {}): ProgressView => ({
  phase: PHASES.PROBING,
  checked: 523,
  total: 1000,
  working: 120,
  rate: 310.4,
  eta: 2,
  serverProgress: 52,
  elapsedMs: 1700,
  ...over,
});

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('phaseOf', () => {
  test('steps and statuses', () => {
    expect(phaseOf({ status: 'in_progress', currentStep: 'validating' })).toBe(PHASES.VALIDATING);
    expect(phaseOf({ status: 'in_progress', currentStep: 'checking_balance' })).toBe(PHASES.BALANCE);
    expect(phaseOf({ status: 'in_progress', currentStep: 'proxy_check_batch_3_of_50' })).toBe(PHASES.PROBING);
    expect(phaseOf({ status: 'in_progress', currentStep: 'custom_url_validation' })).toBe(PHASES.CUSTOM_URLS);
    expect(phaseOf({ status: 'in_progress', currentStep: 'writing_results' })).toBe(PHASES.WRITING);
    expect(phaseOf({ status: 'completed', currentStep: 'writing_results' })).toBe(PHASES.DONE);
    expect(phaseOf({ status: 'failed', currentStep: 'validating' })).toBe(PHASES.FAILED);
  });
});

describe('ProgressTracker', () => {
  test('rate from probing start, ETA from the server, counting down between messages', () => {
    const t = new ProgressTracker(1000);
    expect(t.view.phase).toBe(PHASES.CONNECTING);
    t.update(msg('validating', 0, 0, 0), 1100);
    t.update(msg('proxy_check_batch_1_of_10', 0, 1000, 0), 1200);
    let v = t.update(msg('proxy_check_batch_5_of_10', 500, 1000, 100, { eta: 4 }), 3200);
    expect(v.rate).toBeCloseTo(250, 5);
    expect(v.eta).toBe(4);
    expect(v.elapsedMs).toBe(2200);
    v = t.tick(5300);
    expect(v.eta).toBe(2);
    expect(v.rate).toBeCloseTo(500 / 4.1, 5);
  });

  test('ETA from the rate when the server gives none; clamps nonsense', () => {
    const t = new ProgressTracker(0);
    t.update(msg('proxy_check_batch_1_of_4', 0, 400, 0), 0);
    const v = t.update(msg('proxy_check_batch_2_of_4', 100, 400, 7), 1000);
    expect(v.rate).toBe(100);
    expect(v.eta).toBe(3);
    const w = t.update(msg('proxy_check_batch_2_of_4', 999, 400, -3, { progress: 250 }), 1500);
    expect(w.checked).toBe(400);
    expect(w.working).toBe(0);
    expect(w.serverProgress).toBe(100);
  });

  test('done: checked = total, ETA 0, a rate even for a very fast run', () => {
    const t = new ProgressTracker(0);
    const v = t.update(msg('writing_results', 0, 40, 0, { status: 'completed' }), 500);
    expect(v.phase).toBe(PHASES.DONE);
    expect(v.checked).toBe(40);
    expect(v.eta).toBe(0);
    expect(v.rate).toBe(80);
  });

  test('done: the rate is the run\'s real average, not the last live rate (303 in 4.04 s was shown as 0.3/s)', () => {
    const t = new ProgressTracker(0);
    t.update(msg('proxy_check_batch_1_of_7', 0, 303, 0), 40);
    const live = t.update(msg('proxy_check_batch_1_of_7', 1, 303, 0), 3340); // one early result: 0.3/s
    expect(live.rate).toBeCloseTo(1 / 3.3, 5);
    const done = t.update(msg('writing_results', 303, 303, 40, { status: 'completed' }), 4040);
    expect(done.rate).toBeCloseTo(303 / 4.0, 5); // since probing began at 40 ms
    expect(renderBar(done, { width: 120, color: false, ascii: true, frame: 0 })).toContain('75.8/s');
  });
});

describe('renderBar', () => {
  const o = { width: 100, color: false, ascii: false, frame: 0 };

  test('probing: percent, checked/total, working, rate, ETA', () => {
    const line = renderBar(view(), o);
    expect(line).toStartWith('⠋ Checking ▕');
    expect(line).toContain(' 52.3%  523/1,000  120 working  310/s  ETA 0:02');
    expect(line.length).toBeLessThanOrEqual(99);
  });

  test('ascii and colour variants', () => {
    const a = renderBar(view(), { ...o, ascii: true });
    expect(a).toMatch(/^\| Checking \[#+-+\]  52\.3%  523\/1,000  120 working  310\/s  ETA 0:02$/);
    const c = renderBar(view(), { ...o, color: true });
    expect(c).toContain('\x1b[32m');
    expect(strip(c)).toBe(renderBar(view(), o));
  });

  test('narrow terminals drop stats, never exceed the width', () => {
    for (const width of [20, 30, 40, 50, 60, 80, 200]) {
      const line = strip(renderBar(view(), { ...o, width }));
      expect(line.length).toBeLessThanOrEqual(Math.max(20, width - 1));
      expect(line).toContain('%');
    }
    expect(strip(renderBar(view(), { ...o, width: 50 }))).not.toContain('ETA');
    expect(strip(renderBar(view(), { ...o, width: 20 }))).toBe('⠋ Checking   52.3%');
  });

  test('other phases show a label and the elapsed time', () => {
    expect(renderBar(view({ phase: PHASES.VALIDATING, total: 0 }), o)).toBe('⠋ Validating the list…  0:02');
    expect(renderBar(view({ phase: PHASES.CUSTOM_URLS, serverProgress: 88 }), { ...o, frame: 1 })).toStartWith('⠙ Trying custom URLs…  88%');
    expect(renderBar(view({ phase: PHASES.DONE, checked: 1000, eta: 0 }), o)).toContain('✔ Done ▕████████████████████████████████████████▏ 100.0%  1,000/1,000  120 working  310/s  in 0:02');
  });

  test('property: any view renders one line within the width', () => {
    fc.assert(
      fc.property(
        fc.record({
          checked: fc.nat(10_000_000),
          total: fc.nat(10_000_000),
          working: fc.nat(10_000_000),
          rate: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true })),
          eta: fc.option(fc.nat(1e6)),
          width: fc.integer({ min: 1, max: 300 }),
          phase: fc.constantFrom(...Object.values(PHASES)),
          frame: fc.integer(),
        }),
        (r) => {
          const line = strip(renderBar(view({ ...r, checked: Math.min(r.checked, r.total) }), { width: r.width, color: false, ascii: false, frame: r.frame }));
          expect(line.includes('\n')).toBe(false);
          expect(line.length).toBeLessThanOrEqual(Math.max(20, r.width - 1));
        },
      ),
    );
  });
});

describe('barCells', () => {
  test('eighths, clamping, ascii', () => {
    expect(barCells(0.5, 10, false)).toEqual({ filled: '█████', empty: '     ' });
    expect(barCells(0.55, 10, false)).toEqual({ filled: '█████▌', empty: '    ' });
    expect(barCells(0.51, 10, false)).toEqual({ filled: '█████', empty: '     ' });
    expect(barCells(0.52, 10, false)).toEqual({ filled: '█████▏', empty: '    ' });
    expect(barCells(1.5, 4, false)).toEqual({ filled: '████', empty: '' });
    expect(barCells(Number.NaN, 4, true)).toEqual({ filled: '', empty: '----' });
    expect(barCells(0.75, 4, true)).toEqual({ filled: '###', empty: '-' });
  });
});

describe('renderPlain and PlainThrottle', () => {
  test('lines per phase (ASCII only)', () => {
    expect(renderPlain(view())).toBe('progress  52.3%  523/1,000 checked  120 working  310/s  ETA 0:02');
    expect(renderPlain(view({ rate: null, eta: null }))).toBe('progress  52.3%  523/1,000 checked  120 working  -/s  ETA ?');
    expect(renderPlain(view({ phase: PHASES.DONE }))).toBe('progress 100.0%  1,000/1,000 checked  120 working  done in 0:02');
    expect(renderPlain(view({ phase: PHASES.WRITING }))).toBe('progress writing the result file');
    expect(renderPlain(view({ phase: PHASES.CUSTOM_URLS, serverProgress: 90 }))).toBe('progress trying custom urls (90%)');
  });

  test('due on a phase change, each new 10 %, and every 10 s', () => {
    const p = new PlainThrottle();
    expect(p.due(view({ phase: PHASES.VALIDATING }), 0)).toBe(true);
    expect(p.due(view({ phase: PHASES.VALIDATING }), 10)).toBe(false);
    expect(p.due(view({ checked: 10 }), 20)).toBe(true);
    expect(p.due(view({ checked: 50 }), 30)).toBe(false);
    expect(p.due(view({ checked: 100 }), 40)).toBe(true);
    expect(p.due(view({ checked: 150 }), 50)).toBe(false);
    expect(p.due(view({ checked: 150 }), 10_040)).toBe(true);
    expect(p.due(view({ checked: 950 }), 10_050)).toBe(true);
    expect(p.due(view({ phase: PHASES.DONE, checked: 1000 }), 10_060)).toBe(true);
    expect(p.due(view({ phase: PHASES.DONE, checked: 1000 }), 10_070)).toBe(false);
  });
});

describe('formatting', () => {
  test('clock and rate', () => {
    expect(fmtClock(7)).toBe('0:07');
    expect(fmtClock(65)).toBe('1:05');
    expect(fmtClock(3723)).toBe('1:02:03');
    expect(fmtClock(-3)).toBe('0:00');
    expect(fmtRate(null)).toBe('–/s');
    expect(fmtRate(null, true)).toBe('-/s');
    expect(fmtRate(12.345)).toBe('12.3/s');
    expect(fmtRate(12345)).toBe('12,345/s');
  });
});
