/**
 * The Pools page's "New pool" form: a name, a pasted list, type, region
 * (from /regions, read once), interval and timeout, checked in the page
 * (pool-format.ts poolCreateBody, the bad field marked and focused) before
 * POST /pools; the answer says how many proxies were added and skipped.
 */
import { apiGet, apiPost } from './api';
import { option, type ButtonEl, type InputEl, type SelectEl, type TextAreaEl } from './browser';
import { byId, setText } from './dom';
import { poolCreateBody, type PoolFormValues, type PoolView } from './pool-format';
import { formatCount } from './svg';
import type { ViewContext } from './view-context';

/** The form's fields by the name of the value each holds, then its other elements. */
export const POOL_FORM_FIELDS: Readonly<Record<keyof PoolFormValues, string>> = Object.freeze({
  name: 'pool-name',
  proxies: 'pool-proxies-text',
  type: 'pool-type',
  region: 'pool-region',
  interval: 'pool-interval',
  timeout: 'pool-timeout',
});
export const POOL_FORM_IDS = Object.freeze({ form: 'pool-form', error: 'pool-form-error', created: 'pool-created', submit: 'pool-create', ...POOL_FORM_FIELDS });

export function poolFormHtml(): string {
  return `  <section class="panel" aria-labelledby="pool-new-h">
    <h2 id="pool-new-h">New pool</h2>
    <form id="pool-form" novalidate>
      <div class="field">
        <label for="pool-name">Name</label>
        <input id="pool-name" name="name" type="text" maxlength="100" autocomplete="off" required>
      </div>
      <div class="field">
        <label for="pool-proxies-text">Proxies</label>
        <p id="pool-proxies-hint" class="hint">One per line: <code>host:port</code>, <code>user:pass@host:port</code> or <code>host:port:user:pass</code>.</p>
        <textarea id="pool-proxies-text" name="proxies" rows="6" spellcheck="false" autocomplete="off" aria-describedby="pool-proxies-hint"></textarea>
      </div>
      <div class="row">
        <div class="field"><label for="pool-type">Type</label><select id="pool-type"><option value="http">HTTP</option><option value="socks4">SOCKS4</option><option value="socks5">SOCKS5</option><option value="auto">Auto (try all three)</option></select></div>
        <div class="field"><label for="pool-region">Region</label><select id="pool-region"><option value="us1">Washington DC, USA (us1)</option></select></div>
        <div class="field"><label for="pool-interval">Check every (s)</label><input id="pool-interval" type="number" inputmode="numeric" min="60" max="86400" step="60" value="600" aria-describedby="pool-interval-hint"><p id="pool-interval-hint" class="hint">Working proxies, in seconds</p></div>
        <div class="field"><label for="pool-timeout">Timeout (ms)</label><input id="pool-timeout" type="number" inputmode="numeric" min="1000" max="20000" step="500" value="5000"></div>
      </div>
      <p id="pool-form-error" class="error" role="alert"></p>
      <p id="pool-created" class="hint" role="status"></p>
      <button type="submit" class="primary" id="pool-create">Create pool</button>
    </form>
  </section>`;
}

export type CreatedPool = PoolView & { submitted: { added: number; total_invalid: number; total_duplicates: number } };

export function mountPoolForm(ctx: ViewContext, onCreated: (answer: CreatedPool) => Promise<void>): { loadRegions(): Promise<void> } {
  const ids = POOL_FORM_IDS;
  const formError = byId(ids.error);
  const created = byId(ids.created);
  const region = byId<SelectEl>(ids.region);
  let regionsLoaded = false;

  const values = (): PoolFormValues => {
    const v = (id: string) => byId<InputEl | TextAreaEl | SelectEl>(id).value;
    return { name: v(ids.name), proxies: v(ids.proxies), type: v(ids.type), region: v(ids.region), interval: v(ids.interval), timeout: v(ids.timeout) };
  };

  /** Checks the form; the body to post, or null after marking the bad field. */
  const checked = (): Record<string, unknown> | null => {
    for (const id of Object.values(POOL_FORM_FIELDS)) byId(id).removeAttribute('aria-invalid');
    setText(created, '');
    const c = poolCreateBody(values());
    if ('error' in c) {
      setText(formError, c.error);
      const field = byId(POOL_FORM_FIELDS[c.field]);
      field.setAttribute('aria-invalid', 'true');
      field.focus();
      return null;
    }
    setText(formError, '');
    return c.body;
  };

  byId(ids.form).addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = ctx.key();
    if (k === null) return;
    const body = checked();
    if (body === null) return;
    const submit = byId<ButtonEl>(ids.submit);
    submit.disabled = true;
    const r = await apiPost('/pools', k, body);
    submit.disabled = false;
    if (!r.ok) return ctx.failed(r.status, r.body, formError);
    const p = r.body as CreatedPool;
    const skipped = p.submitted.total_invalid + p.submitted.total_duplicates;
    setText(created, `Created “${p.name}” with ${formatCount(p.submitted.added)} proxies${skipped > 0 ? ` (${formatCount(skipped)} invalid or duplicate lines skipped)` : ''}.`);
    byId<InputEl>(ids.name).value = '';
    byId<TextAreaEl>(ids.proxies).value = '';
    await onCreated(p);
  });

  return {
    /** The region list from /regions (once). */
    async loadRegions() {
      if (regionsLoaded) return;
      regionsLoaded = true;
      const r = await apiGet('/regions');
      if (!r.ok) return;
      const b = r.body as { regions: { code: string; name: string }[]; default: string };
      region.replaceChildren(...b.regions.filter((x) => x.code !== 'test1').map((x) => option(`${x.name} (${x.code})`, x.code)));
      region.value = b.default;
    },
  };
}
