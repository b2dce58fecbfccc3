import { ApiRefusal, type AdminKey, type Api, type KeySettings, type UsageReport } from './api.js';
import { amount, budgetBar } from './chart.js';
import { h, replace, uid } from './dom.js';
import { dailyChart, dayOf, dayStart, periodWords, sumBy, totalsView, usageTable } from './usage.js';

/**
 * The Keys view of an admin key (`/v1/admin/*`): make a client key (shown once, with a copy
 * button), see every key with its budget as a bar, change its budget, period, models and limits,
 * disable or enable it, revoke it; and usage by key over a range of days, with one key's days
 * and models on demand.
 */

const DAY_S = 86_400;

function messageOf(error: unknown): string {
  if (!(error instanceof ApiRefusal)) return `The request failed: ${String(error)}`;
  const body = error.body;
  const inner = typeof body === 'object' && body !== null ? ((body as Record<string, unknown>)['error'] ?? body) : undefined;
  const message = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)['message'] : undefined;
  return `HTTP ${error.status} ${error.code}${typeof message === 'string' ? `: ${message}` : ''}`;
}

/** The settings fields of a create or an edit, their values read back as the API takes them. */
class SettingsFields {
  readonly element: HTMLElement;
  readonly name: HTMLInputElement;
  readonly budget: HTMLInputElement;
  readonly period: HTMLSelectElement;
  readonly models: HTMLInputElement;
  readonly rate: HTMLInputElement;
  readonly inFlight: HTMLInputElement;
  private readonly errors = new Map<string, HTMLElement>();

  constructor(key?: AdminKey) {
    const field = (param: string, label: string, input: HTMLInputElement | HTMLSelectElement, hint: string): HTMLElement => {
      const error = h('p', { class: 'error', role: 'alert', hidden: true });
      this.errors.set(param, error);
      return h('div', { class: `field f-${param}` }, h('label', { for: input.id }, label), input, h('small', { class: 'hint' }, hint), error);
    };
    this.name = h('input', { id: uid('key-name'), type: 'text', autocomplete: 'off', maxlength: 200, required: true });
    this.budget = h('input', { id: uid('key-budget'), type: 'number', min: 0, step: 'any', inputmode: 'decimal', placeholder: 'none' });
    this.period = h(
      'select',
      { id: uid('key-period') },
      h('option', { value: 'month' }, 'a month (UTC)'),
      h('option', { value: 'day' }, 'a day (UTC)'),
      h('option', { value: '' }, 'in all (lifetime)'),
    );
    this.models = h('input', { id: uid('key-models'), type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'every model' });
    this.rate = h('input', { id: uid('key-rate'), type: 'number', min: 1, step: 1, placeholder: 'server default' });
    this.inFlight = h('input', { id: uid('key-in-flight'), type: 'number', min: 1, step: 1, placeholder: 'server default' });
    if (key) {
      this.name.value = key.name;
      this.budget.value = key.budget === null ? '' : String(key.budget);
      this.period.value = key.budget_period ?? '';
      this.models.value = key.models?.join(', ') ?? '';
      this.rate.value = key.rate_limit_per_min === null ? '' : String(key.rate_limit_per_min);
      this.inFlight.value = key.max_tasks_in_flight === null ? '' : String(key.max_tasks_in_flight);
    }
    this.element = h(
      'div',
      { class: 'settings' },
      field('name', 'Name', this.name, 'Who the key is for.'),
      h(
        'div',
        { class: 'pair' },
        field('budget', 'Budget', this.budget, 'Empty: no budget.'),
        field('budget_period', 'Budget period', this.period, 'UTC calendar days or months.'),
      ),
      field('models', 'Models', this.models, 'Ids or prefixes ending in *, comma-separated (vendora/*). Empty: every model.'),
      h(
        'div',
        { class: 'pair' },
        field('rate_limit_per_min', 'Creates per minute', this.rate, 'Empty: the server’s setting.'),
        field('max_tasks_in_flight', 'Tasks at once', this.inFlight, 'Empty: the server’s setting.'),
      ),
    );
  }

  /** The fields as the API takes them: an empty field is null (no budget, every model, the default). */
  values(): KeySettings {
    const number = (input: HTMLInputElement): number | null => (input.value.trim() === '' ? null : Number(input.value));
    const models = this.models.value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    const budget = number(this.budget);
    return {
      name: this.name.value,
      budget,
      // A period means nothing without a budget.
      budget_period: budget !== null && (this.period.value === 'day' || this.period.value === 'month') ? this.period.value : null,
      models: models.length === 0 ? null : models,
      rate_limit_per_min: number(this.rate),
      max_tasks_in_flight: number(this.inFlight),
    };
  }

  clearErrors(): void {
    for (const error of this.errors.values()) error.hidden = true;
    this.element.querySelectorAll('.invalid').forEach((element) => element.classList.remove('invalid'));
  }

  /** A refusal shown at its field; true when there was one to show it at. */
  showError(error: unknown): boolean {
    if (!(error instanceof ApiRefusal)) return false;
    const target = this.errors.get(error.param);
    if (!target) return false;
    target.hidden = false;
    replace(target, messageOf(error));
    target.parentElement?.classList.add('invalid');
    return true;
  }
}

function keyBudget(key: AdminKey, currency: string): HTMLElement {
  if (key.budget === null && key.spent === 0 && key.reserved === 0) return h('p', { class: 'hint' }, 'No budget · nothing spent');
  if (key.budget === null)
    return h('p', { class: 'hint' }, `No budget · spent ${amount(key.spent)} ${currency}${key.reserved > 0 ? ` · ${amount(key.reserved)} reserved` : ''}`);
  const used = key.spent + key.reserved;
  const line = `${amount(key.spent)} spent + ${amount(key.reserved)} reserved of ${amount(key.budget)} ${currency} ${periodWords(key.budget_period)}`;
  return h(
    'div',
    { class: 'key-budget' },
    budgetBar(key.spent, key.reserved, key.budget, line),
    h('p', { class: 'hint' }, `${line} (${key.budget === 0 ? 100 : ((used / key.budget) * 100).toFixed(1)}%)`),
  );
}

function limitsText(key: AdminKey): string {
  const rate = key.rate_limit_per_min === null ? 'default rate' : `${key.rate_limit_per_min} creates/min`;
  const flight = key.max_tasks_in_flight === null ? 'default tasks at once' : `${key.max_tasks_in_flight} tasks at once`;
  return `${key.models === null ? 'every model' : key.models.join(', ')} · ${rate} · ${flight}`;
}

export class KeysPage {
  readonly element: HTMLElement;
  private keys: AdminKey[] = [];
  private currency = '';
  private readonly list = h('ul', { class: 'keys' });
  private readonly listStatus = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  private readonly created = h('div', { class: 'created', hidden: true, role: 'region', 'aria-label': 'New key' });
  private readonly usageStatus = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  private readonly usageBody = h('div', { class: 'usage-body' });
  private readonly detail = h('div', { class: 'key-detail' });
  private readonly from: HTMLInputElement;
  private readonly to: HTMLInputElement;
  private range: { start?: number; end?: number } = {};

  constructor(private readonly api: Api) {
    // --- create ---------------------------------------------------------------------------
    const fields = new SettingsFields();
    const createError = h('p', { class: 'error', role: 'alert', hidden: true });
    const createButton = h('button', { type: 'submit' }, 'Create key');
    const form = h(
      'form',
      { class: 'panel', 'aria-label': 'Create a key', novalidate: true },
      h('h2', {}, 'Create a key'),
      fields.element,
      h('div', { class: 'actions' }, createButton),
      createError,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      fields.clearErrors();
      createError.hidden = true;
      createButton.disabled = true;
      this.api
        .createKey(fields.values())
        .then((key) => {
          form.reset();
          this.showCreated(key);
          this.keys.unshift(key);
          this.renderKeys();
        })
        .catch((error: unknown) => {
          if (!fields.showError(error)) {
            createError.hidden = false;
            replace(createError, messageOf(error));
          }
        })
        .finally(() => (createButton.disabled = false));
    });

    // --- list -----------------------------------------------------------------------------
    const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
    refresh.addEventListener('click', () => void this.load());
    const keysPanel = h(
      'section',
      { class: 'panel', 'aria-label': 'Keys' },
      h('h2', {}, 'Keys'),
      this.listStatus,
      this.list,
      h('div', { class: 'actions' }, refresh),
    );

    // --- usage by key ---------------------------------------------------------------------
    const fromId = uid('admin-from');
    const toId = uid('admin-to');
    this.from = h('input', { id: fromId, type: 'date' });
    this.to = h('input', { id: toId, type: 'date' });
    const range = h(
      'form',
      { class: 'range', novalidate: true },
      h('span', {}, h('label', { for: fromId }, 'From'), this.from),
      h('span', {}, h('label', { for: toId }, 'To'), this.to),
      h('span', { class: 'range-actions' }, h('button', { type: 'submit' }, 'Show')),
    );
    range.addEventListener('submit', (event) => {
      event.preventDefault();
      this.range = {
        ...(this.from.value ? { start: dayStart(this.from.value) } : {}),
        ...(this.to.value ? { end: dayStart(this.to.value) + DAY_S } : {}),
      };
      void this.loadUsage();
    });
    const usagePanel = h(
      'section',
      { class: 'panel usage-panel', 'aria-label': 'Usage by key' },
      h('h2', {}, 'Usage by key'),
      range,
      this.usageStatus,
      this.usageBody,
      this.detail,
    );

    this.element = h('div', { class: 'columns' }, h('div', { class: 'column' }, this.created, form, keysPanel), h('div', { class: 'column' }, usagePanel));
  }

  async load(): Promise<void> {
    replace(this.listStatus, 'Loading…');
    try {
      const keys: AdminKey[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await this.api.adminKeys(after);
        keys.push(...page.data);
        if (!page.hasMore || page.lastId === null) break;
        after = page.lastId;
      }
      this.keys = keys;
      // The report before the list: it names the currency the budgets are in (and the report its keys).
      await this.loadUsage();
      this.renderKeys();
    } catch (error) {
      replace(this.listStatus, messageOf(error));
    }
  }

  private showCreated(key: AdminKey): void {
    const secret = key.key ?? '';
    const keyId = uid('new-key');
    const input = h('input', { id: keyId, type: 'text', readonly: true, value: secret, spellcheck: 'false', class: 'secret' });
    const copy = h('button', { type: 'button' }, 'Copy key');
    copy.addEventListener('click', () => {
      input.select();
      void navigator.clipboard?.writeText(secret).then(
        () => (copy.textContent = 'Copied'),
        () => (copy.textContent = 'Copy failed: select the text'),
      );
    });
    const done = h('button', { type: 'button', class: 'secondary' }, 'Done');
    done.addEventListener('click', () => {
      this.created.hidden = true;
      replace(this.created);
    });
    replace(
      this.created,
      h('h2', {}, `Key for ${key.name}`),
      h('p', {}, h('strong', {}, 'Copy it now: it is not shown again.'), ' The server keeps only its hash.'),
      h('label', { for: keyId }, 'The new key'),
      h('div', { class: 'secret-row' }, input, copy, done),
    );
    this.created.hidden = false;
    this.created.classList.add('panel');
    this.created.scrollIntoView({ block: 'nearest' });
  }

  private renderKeys(): void {
    replace(
      this.listStatus,
      this.keys.length === 0 ? 'No client keys yet.' : `${this.keys.length} client key${this.keys.length === 1 ? '' : 's'}, newest first.`,
    );
    replace(this.list, ...this.keys.map((key) => this.keyItem(key)));
  }

  private replaceKey(key: AdminKey): void {
    const index = this.keys.findIndex((item) => item.id === key.id);
    if (index >= 0) this.keys[index] = key;
    this.renderKeys();
  }

  private keyItem(key: AdminKey): HTMLElement {
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const fail = (caught: unknown): void => {
      error.hidden = false;
      replace(error, messageOf(caught));
    };
    const edit = h('button', { type: 'button', class: 'secondary' }, 'Edit');
    const toggle = h('button', { type: 'button', class: 'secondary' }, key.disabled ? 'Enable' : 'Disable');
    const revoke = h('button', { type: 'button', class: 'secondary danger' }, 'Revoke');
    const usage = h('button', { type: 'button', class: 'secondary' }, 'Usage');
    const slot = h('div', { class: 'edit-slot' });
    const item = h(
      'li',
      { class: `key${key.disabled ? ' disabled' : ''}`, 'data-key': key.id, 'aria-label': `key ${key.name}` },
      h(
        'div',
        { class: 'key-head' },
        h('strong', { class: 'key-name' }, key.name),
        h('span', { class: `badge ${key.disabled ? 'failed' : 'completed'}` }, key.disabled ? 'disabled' : 'active'),
        h('code', { class: 'key-id' }, key.id),
      ),
      h('p', { class: 'hint key-limits' }, limitsText(key), ` · since ${dayOf(key.created_at)}`),
      keyBudget(key, this.currency),
      h('div', { class: 'actions' }, edit, toggle, usage, revoke),
      error,
      slot,
    );
    toggle.addEventListener('click', () => {
      toggle.disabled = true;
      this.api.updateKey(key.id, { disabled: !key.disabled }).then(
        (next) => this.replaceKey(next),
        (caught: unknown) => {
          toggle.disabled = false;
          fail(caught);
        },
      );
    });
    revoke.addEventListener('click', () => {
      // Two steps: a revoked key cannot come back.
      if (revoke.dataset['armed'] !== 'true') {
        revoke.dataset['armed'] = 'true';
        revoke.textContent = 'Revoke for good';
        return;
      }
      revoke.disabled = true;
      this.api.revokeKey(key.id).then(
        () => {
          this.keys = this.keys.filter((other) => other.id !== key.id);
          this.renderKeys();
        },
        (caught: unknown) => {
          revoke.disabled = false;
          fail(caught);
        },
      );
    });
    usage.addEventListener('click', () => void this.showKeyUsage(key));
    edit.addEventListener('click', () => {
      if (slot.firstChild) {
        replace(slot);
        return;
      }
      const fields = new SettingsFields(key);
      const save = h('button', { type: 'submit' }, 'Save');
      const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
      cancel.addEventListener('click', () => replace(slot));
      const form = h(
        'form',
        { class: 'edit', 'aria-label': `Edit ${key.name}`, novalidate: true },
        fields.element,
        h('div', { class: 'actions' }, save, cancel),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        fields.clearErrors();
        error.hidden = true;
        save.disabled = true;
        this.api.updateKey(key.id, fields.values()).then(
          (next) => this.replaceKey(next),
          (caught: unknown) => {
            save.disabled = false;
            if (!fields.showError(caught)) fail(caught);
          },
        );
      });
      replace(slot, form);
      fields.name.focus();
    });
    return item;
  }

  private async loadUsage(): Promise<void> {
    replace(this.usageStatus, 'Loading…');
    let report: UsageReport;
    try {
      report = await this.api.adminUsage('key', this.range);
    } catch (error) {
      replace(this.usageStatus, messageOf(error));
      return;
    }
    this.currency = report.currency;
    this.from.value = dayOf(report.start);
    this.to.value = dayOf(report.end - DAY_S);
    replace(this.usageStatus, `${dayOf(report.start)} to ${dayOf(report.end - DAY_S)} (UTC days) · finished tasks only · amounts in ${report.currency}`);
    const names = new Map(this.keys.map((key) => [key.id, key.name]));
    const rows = sumBy(report.data, (row) => row.key_id ?? '');
    const label = (id: string): Node => {
      const name = names.get(id);
      return h('span', {}, name ?? id, name ? h('small', { class: 'hint' }, ` ${id}`) : null);
    };
    replace(
      this.usageBody,
      totalsView(report.totals, report.currency),
      rows.length === 0 ? h('p', { class: 'hint' }, 'No finished tasks in this range.') : usageTable('Usage by key', 'Key', rows, report.totals.cost, label),
    );
  }

  /** One key's days and models over the same range. */
  private async showKeyUsage(key: AdminKey): Promise<void> {
    replace(this.detail, h('p', { class: 'hint' }, `Loading ${key.name}…`));
    try {
      const report = await this.api.adminUsage('model,day', this.range, key.id);
      const models = sumBy(report.data, (row) => row.model ?? '');
      replace(
        this.detail,
        h('h3', {}, `${key.name} `, h('code', {}, key.id)),
        totalsView(report.totals, report.currency),
        dailyChart(report, report.data),
        models.length === 0
          ? h('p', { class: 'hint' }, 'No finished tasks in this range.')
          : usageTable(`Usage of ${key.name} by model`, 'Model', models, report.totals.cost),
      );
      this.detail.scrollIntoView({ block: 'nearest' });
    } catch (error) {
      replace(this.detail, h('p', { class: 'error' }, messageOf(error)));
    }
  }
}
