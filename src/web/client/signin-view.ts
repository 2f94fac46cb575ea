/**
 * The "Sign in" view: an API key (checked with GET /me) and "Remember me"
 * (localStorage instead of sessionStorage: api.ts saveKey), with how to get
 * a key. A refused key is marked and says why.
 */
import { apiGet } from './api';
import type { ButtonEl, InputEl } from './browser';
import { byId, setText } from './dom';
import { errorText } from './format';

export const SIGNIN_IDS = Object.freeze({ view: 'view-signin', form: 'signin-form', key: 'key', remember: 'remember', error: 'signin-error', submit: 'signin-submit' });

export function signinViewHtml(): string {
  return `<section id="view-signin" class="view narrow" aria-labelledby="signin-h" hidden>
  <h1 id="signin-h" tabindex="-1">Sign in</h1>
  <form id="signin-form" class="panel" novalidate>
    <div class="field">
      <label for="key">API key</label>
      <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required aria-describedby="key-hint signin-error">
      <p id="key-hint" class="hint">Your key stays in this browser and is sent only to this service.</p>
    </div>
    <div class="checkbox">
      <input id="remember" name="remember" type="checkbox">
      <label for="remember">Remember me on this device</label>
    </div>
    <p id="signin-error" class="error" role="alert"></p>
    <button type="submit" class="primary" id="signin-submit">Sign in</button>
  </form>
  <section class="panel" aria-labelledby="nokey-h">
    <h2 id="nokey-h">No key, or lost it?</h2>
    <p class="hint">Keys are issued by whoever runs this service, on its machine: <code>npm run admin -- issue-key --email you@example.com</code> prints a new one (<code>npm run admin -- list-accounts</code> lists the accounts). A new installation prints its demo account's key once, in the log of its first start.</p>
  </section>
</section>`;
}

/** `onSignedIn`: a key GET /me accepted, and whether to remember it. */
export function mountSignin(onSignedIn: (key: string, remember: boolean) => void): { say(message: string): void } {
  const ids = SIGNIN_IDS;
  const input = byId<InputEl>(ids.key);
  const error = byId(ids.error);
  const submit = byId<ButtonEl>(ids.submit);
  const refuse = (message: string) => {
    setText(error, message);
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  };
  byId(ids.form).addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = input.value.trim();
    if (k === '') return refuse('Enter your API key.');
    submit.disabled = true;
    setText(error, '');
    const r = await apiGet('/me', k);
    submit.disabled = false;
    if (!r.ok) return refuse(r.status === 401 ? 'That API key is not valid.' : errorText(r.status, r.body));
    input.removeAttribute('aria-invalid');
    input.value = '';
    onSignedIn(k, byId<InputEl>(ids.remember).checked);
  });
  return { say: (message) => setText(error, message) };
}
