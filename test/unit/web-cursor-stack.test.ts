import { describe, expect, test } from 'bun:test';
import { CursorStack } from '../../src/web/client/cursor-stack';

describe('CursorStack', () => {
  test('starts on the first page with nowhere to go', () => {
    const s = new CursorStack();
    expect([s.current, s.index, s.hasPrevious, s.hasNext]).toEqual([null, 0, false, false]);
    expect(s.forward()).toBe(false);
    expect(s.back()).toBe(false);
  });

  test('forward follows the answered cursors, back returns to each page', () => {
    const s = new CursorStack();
    s.answered('c1');
    expect(s.hasNext).toBe(true);
    expect(s.forward()).toBe(true);
    expect([s.current, s.index, s.hasPrevious, s.hasNext]).toEqual(['c1', 1, true, false]);
    s.answered('c2');
    s.forward();
    expect(s.current).toBe('c2');
    expect(s.back()).toBe(true);
    expect([s.current, s.index]).toEqual(['c1', 1]);
    expect(s.back()).toBe(true);
    expect([s.current, s.index, s.hasPrevious]).toEqual([null, 0, false]);
  });

  test('the last page answers null: no next', () => {
    const s = new CursorStack();
    s.answered('c1');
    s.forward();
    s.answered(null);
    expect(s.hasNext).toBe(false);
    expect(s.forward()).toBe(false);
    expect(s.current).toBe('c1');
  });

  test('reset goes back to the first page', () => {
    const s = new CursorStack();
    s.answered('c1');
    s.forward();
    s.answered('c2');
    s.reset();
    expect([s.current, s.index, s.hasNext]).toEqual([null, 0, false]);
  });
});
