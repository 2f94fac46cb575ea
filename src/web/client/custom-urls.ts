/**
 * The check form's custom URLs (at most MAX_CUSTOM_URLS rows): each row a
 * URL, its status codes, a required text and whether that text is
 * case-sensitive, with a Remove button; rows are labelled by their place.
 */
import { create, type ButtonEl, type InputEl, type LabelEl } from './browser';
import { byId } from './dom';
import type { CustomUrlInput } from './format';

export const CUSTOM_URLS_IDS = Object.freeze({ rows: 'cu-rows', add: 'cu-add' });

const MAX_CUSTOM_URLS = 10;

export function customUrlsHtml(): string {
  return `    <fieldset class="custom-urls" aria-describedby="cu-hint">
      <legend>Custom URLs <span class="hint">(optional)</span></legend>
      <p class="hint" id="cu-hint">Working proxies are also tried against these URLs. Status codes default to 200.</p>
      <div id="cu-rows"></div>
      <button type="button" id="cu-add" class="secondary">Add a URL</button>
    </fieldset>`;
}

/** A labelled field wrapping `input` (a checkbox's label after it). */
function field(label: string, input: InputEl, cls = 'field') {
  const wrap = create('div');
  wrap.className = cls;
  const l = create<LabelEl>('label');
  l.htmlFor = input.id;
  l.textContent = label;
  if (input.type === 'checkbox') wrap.append(input, l);
  else wrap.append(l, input);
  return wrap;
}

function input(id: string, type: string, part: string): InputEl {
  const i = create<InputEl>('input');
  i.id = id;
  i.type = type;
  i.spellcheck = false;
  i.dataset.part = part;
  return i;
}

/** The inputs of row `n`: URL, status codes, required text, case-sensitive. */
function rowInputs(n: number): InputEl[] {
  const url = input(`cu-url-${n}`, 'url', 'url');
  url.placeholder = 'https://example.com/';
  const codes = input(`cu-codes-${n}`, 'text', 'codes');
  codes.placeholder = '200';
  codes.inputMode = 'numeric';
  return [url, codes, input(`cu-text-${n}`, 'text', 'text'), input(`cu-case-${n}`, 'checkbox', 'case')];
}

export function mountCustomUrls(): { inputs(): CustomUrlInput[]; firstInputOf(row: number): InputEl | null } {
  const rows = byId(CUSTOM_URLS_IDS.rows);
  const add = byId<ButtonEl>(CUSTOM_URLS_IDS.add);
  let rowSeq = 0;

  const relabel = () => {
    [...rows.children].forEach((r, i) => {
      r.setAttribute('aria-label', `Custom URL ${i + 1}`);
      const btn = r.querySelector('button');
      if (btn) btn.setAttribute('aria-label', `Remove custom URL ${i + 1}`);
    });
    add.disabled = rows.children.length >= MAX_CUSTOM_URLS;
  };

  const addRow = () => {
    if (rows.children.length >= MAX_CUSTOM_URLS) return;
    const row = create('div');
    row.className = 'cu-row';
    row.setAttribute('role', 'group');
    row.setAttribute('aria-label', `Custom URL ${rows.children.length + 1}`);
    const [url, codes, must, cs] = rowInputs(++rowSeq) as [InputEl, InputEl, InputEl, InputEl];
    const remove = create<ButtonEl>('button');
    remove.type = 'button';
    remove.className = 'secondary small';
    remove.textContent = 'Remove';
    remove.addEventListener('click', () => {
      row.remove();
      relabel();
      add.focus();
    });
    row.append(field('URL', url, 'field grow'), field('Status codes', codes), field('Required text', must), field('Case-sensitive', cs, 'checkbox'), remove);
    rows.append(row);
    relabel();
    url.focus();
  };
  add.addEventListener('click', addRow);

  return {
    inputs: () =>
      [...rows.children].map((r) => {
        const v = (part: string) => r.querySelector<InputEl>(`[data-part="${part}"]`);
        return { url: v('url')?.value ?? '', codes: v('codes')?.value ?? '', text: v('text')?.value ?? '', caseSensitive: v('case')?.checked ?? false };
      }),
    firstInputOf: (row) => rows.children[row]?.querySelector<InputEl>('input') ?? null,
  };
}
