/**
 * The few browser APIs the dashboard uses, typed locally. The project's
 * tsconfig has no DOM lib on purpose: `/// <reference lib="dom" />` is
 * program-wide and would change server-side types (WebSocket options,
 * Response.json()), so the client reaches the page through these narrow
 * interfaces instead. Only the bundle (browser) evaluates this module.
 */

export interface Evt {
  target: unknown;
  preventDefault(): void;
}

export interface Elem {
  id: string;
  className: string;
  hidden: boolean;
  textContent: string | null;
  innerHTML: string;
  readonly dataset: Record<string, string | undefined>;
  readonly children: ArrayLike<Elem> & Iterable<Elem>;
  /** Inner width in CSS pixels (0 while hidden). */
  readonly clientWidth: number;
  scrollLeft: number;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  getAttribute(name: string): string | null;
  addEventListener(type: string, listener: (e: Evt) => void): void;
  querySelector<T extends Elem = Elem>(selector: string): T | null;
  querySelectorAll<T extends Elem = Elem>(selector: string): Iterable<T>;
  closest<T extends Elem = Elem>(selector: string): T | null;
  append(...nodes: (Elem | string)[]): void;
  replaceChildren(...nodes: (Elem | string)[]): void;
  remove(): void;
  focus(): void;
  scrollIntoView(options?: { block?: 'start' | 'center' | 'end' | 'nearest'; behavior?: 'auto' | 'smooth' }): void;
}

export interface InputEl extends Elem {
  value: string;
  checked: boolean;
  disabled: boolean;
  type: string;
  placeholder: string;
  spellcheck: boolean;
  inputMode: string;
  readonly files: ArrayLike<{ text(): Promise<string> }> | null;
}
export interface TextAreaEl extends Elem {
  value: string;
}
export interface SelectEl extends Elem {
  value: string;
}
export interface ButtonEl extends Elem {
  disabled: boolean;
  type: string;
}
export interface LabelEl extends Elem {
  htmlFor: string;
}
export interface AnchorEl extends Elem {
  href: string;
  download: string;
  click(): void;
}
export interface ProgressEl extends Elem {
  value: number;
}
export interface OptionEl extends Elem {
  value: string;
}
export interface TableEl extends Elem {
  readonly tBodies: ArrayLike<Elem>;
  readonly tHead: Elem | null;
}

interface Doc {
  readonly readyState: string;
  title: string;
  getElementById(id: string): Elem | null;
  createElement(tag: string): Elem;
  addEventListener(type: string, listener: () => void): void;
}

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

interface Loc {
  hash: string;
  readonly origin: string;
  readonly host: string;
  readonly hostname: string;
  readonly protocol: string;
}

interface Win {
  readonly location: Loc;
  readonly sessionStorage: StorageLike;
  readonly localStorage: StorageLike;
  addEventListener(type: string, listener: () => void): void;
}

const g = globalThis as unknown as { document: Doc; window: Win };

export function doc(): Doc {
  return g.document;
}

export function win(): Win {
  return g.window;
}

/** A new element of a known kind. */
export function create<T extends Elem = Elem>(tag: string): T {
  return g.document.createElement(tag) as T;
}

/** An <option>. */
export function option(text: string, value: string): OptionEl {
  const o = create<OptionEl>('option');
  o.value = value;
  o.textContent = text;
  return o;
}
