/**
 * The dashboard's Webhooks view (#/webhooks) as static, labelled markup,
 * placed into the page by page.ts: the account's webhooks (state, events,
 * URL, last success; send a test, show deliveries, delete), a form that adds
 * one (the secret shown once), and the chosen webhook's recent deliveries
 * with their attempts. src/web/client/webhooks-view.ts fills it in.
 */
export const WEBHOOKS_NAV = '<li><a href="#/webhooks" data-route="webhooks">Webhooks</a></li>';

export const WEBHOOKS_VIEW = `<section id="view-webhooks" class="view" aria-labelledby="webhooks-h" hidden>
  <h1 id="webhooks-h" tabindex="-1">Webhooks</h1>
  <p class="hint">Pool changes and finished async checks pushed to your URL, signed with Standard Webhooks (docs: API, "Webhooks").</p>
  <p id="webhooks-error" class="error" role="alert"></p>
  <section class="panel" aria-labelledby="webhooks-list-h">
    <h2 id="webhooks-list-h">Your webhooks</h2>
    <p id="webhooks-empty" class="hint" hidden>No webhooks yet: add one below.</p>
    <div class="table-wrap" role="region" aria-labelledby="webhooks-list-h" tabindex="0">
      <table id="webhooks-table"><thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Events</th><th scope="col">Last success</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>
    </div>
  </section>
  <section id="webhook-deliveries" class="panel" aria-labelledby="wd-h" hidden>
    <h2 id="wd-h">Recent deliveries</h2>
    <p id="wd-empty" class="hint" hidden>No deliveries yet: send a test.</p>
    <div class="table-wrap" role="region" aria-labelledby="wd-h" tabindex="0">
      <table id="wd-table"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Next try</th></tr></thead><tbody></tbody></table>
    </div>
  </section>
  <section class="panel" aria-labelledby="webhook-new-h">
    <h2 id="webhook-new-h">Add a webhook</h2>
    <form id="webhook-form" novalidate>
      <div class="field">
        <label for="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" maxlength="2048" autocomplete="off" spellcheck="false" placeholder="https://example.com/hook" required>
      </div>
      <fieldset class="field">
        <legend>Events</legend>
        <label><input type="checkbox" name="events" value="pool.proxies_changed" checked> Proxies up or down</label>
        <label><input type="checkbox" name="events" value="pool.paused" checked> Pool paused</label>
        <label><input type="checkbox" name="events" value="pool.resumed" checked> Pool resumed</label>
        <label><input type="checkbox" name="events" value="check.completed"> Async check finished</label>
      </fieldset>
      <p id="webhook-form-error" class="error" role="alert"></p>
      <p id="webhook-secret" class="hint" role="status"></p>
      <button type="submit" class="primary" id="webhook-add">Add webhook</button>
    </form>
  </section>
</section>`;
