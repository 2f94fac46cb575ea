/** Tests for src/web/client/failures.ts: the failure-reasons chart's data and notes. */
import { describe, expect, test } from 'bun:test';
import { ERROR_NOTES, failureBars, failureNotesHtml } from '../../src/web/client/failures';
import { PROBE_ERROR_CODES } from '../../src/probe/types';

const rec = (status: string, error = '') => ({ status, error });

describe('failureBars', () => {
  test('summary.errors when the result has it: most first, zero counts dropped', () => {
    expect(failureBars({ timeout: 3, connect_refused: 7, blocked_target: 0 }, [rec('failed', 'dns_failed')])).toEqual([
      { label: 'connect_refused', value: 7 },
      { label: 'timeout', value: 3 },
    ]);
  });
  test('without it (an older result), counted from the records; ties by code', () => {
    const records = [rec('working'), rec('failed', 'timeout'), rec('failed', 'connect_refused'), rec('failed', 'timeout'), rec('failed', 'auth_required'), rec('failed')];
    expect(failureBars(undefined, records)).toEqual([
      { label: 'timeout', value: 2 },
      { label: 'auth_required', value: 1 },
      { label: 'connect_refused', value: 1 },
    ]);
    expect(failureBars(null, [rec('working')])).toEqual([]);
    expect(failureBars([1, 2], [rec('failed', 'timeout')])).toEqual([{ label: 'timeout', value: 1 }]);
  });
});

describe('ERROR_NOTES', () => {
  test('a note for every code a probe can report, and no other', () => {
    expect(Object.keys(ERROR_NOTES).sort()).toEqual([...PROBE_ERROR_CODES].sort());
  });
  test('the notes of the codes shown, escaped; none for unknown codes', () => {
    expect(failureNotesHtml([{ label: 'connect_refused', value: 2 }, { label: 'whatever', value: 1 }])).toBe(
      '<dl class="notes"><div><dt><code>connect_refused</code></dt><dd>nothing listens at that address and port</dd></div></dl>',
    );
    expect(failureNotesHtml([{ label: 'whatever', value: 1 }])).toBe('');
  });
});
