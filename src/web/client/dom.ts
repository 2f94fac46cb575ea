/**
 * Tiny DOM helpers of the dashboard (browser only): typed lookups that fail
 * loudly when the page and the script disagree, showing/hiding, and a polite
 * screen-reader announcer with a minimum gap between announcements.
 */
import { doc, type Elem } from './browser';

export function byId<T extends Elem = Elem>(id: string): T {
  const el = doc().getElementById(id);
  if (el === null) throw new Error(`dashboard: element #${id} is missing from the page`);
  return el as T;
}

export function show(el: Elem, visible: boolean): void {
  el.hidden = !visible;
}

/** Replaces the text of an element (never parsed as markup). */
export function setText(el: Elem, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/**
 * An aria-live region writer: `say(text)` updates the region at most once per
 * `gapMs` (the latest text wins; one timer at a time), `now(text)` at once.
 */
export function announcer(region: Elem, gapMs = 3000): { say(text: string): void; now(text: string): void; stop(): void } {
  let last = 0;
  let pending: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const write = (text: string) => {
    last = Date.now();
    region.textContent = text;
  };
  const stop = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = null;
  };
  return {
    say(text) {
      const wait = last + gapMs - Date.now();
      if (wait <= 0 && timer === null) {
        write(text);
        return;
      }
      pending = text;
      if (timer === null) {
        timer = setTimeout(() => {
          timer = null;
          if (pending !== null) write(pending);
          pending = null;
        }, Math.max(0, wait));
      }
    },
    now(text) {
      stop();
      write(text);
    },
    stop,
  };
}
