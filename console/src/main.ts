import { Api, ApiRefusal, isFinal, type ModelInfo, type TaskView } from './api.js';
import { readCapabilities } from './capabilities.js';
import { amount } from './chart.js';
import { formatBytes, h, replace, uid } from './dom.js';
import { ACCEPT, buildForm, type ModelForm } from './form.js';
import { priceLabel } from './pricing.js';
import { RunEstimate } from './estimate.js';
import { ModelCard } from './model-card.js';
import { ModelPicker, familyOf, nameOf } from './picker.js';
import { History } from './history.js';
import { KeysPage } from './keys.js';
import { UsagePanel } from './usage.js';
import { curlSnippet, sdkSnippet, shortenDataUrls } from './snippets.js';
import { validateRequest, type ConsoleHints } from './validate.js';
import { setEventsListed, transport, watch } from './watch.js';

/**
 * The console: an API key (kept in this tab's sessionStorage only). With a client key: a model,
 * a form generated from its schema, then the task followed to its result, and the tasks of this
 * key (the Generate view); its usage and budget (the Usage view). With an admin key: the Keys
 * view (key administration and usage by key). The console tells the two apart by asking: an
 * admin key is refused on `GET /v1/models` (401) and answered on `GET /v1/admin/keys`.
 */

type View = 'generate' | 'usage' | 'keys';

const KEY_STORAGE = 'mediagate.apiKey';

function readHints(): ConsoleHints {
  const content = document.querySelector<HTMLMetaElement>('meta[name="mediagate-hints"]')?.content ?? '';
  try {
    return JSON.parse(content) as ConsoleHints;
  } catch {
    return { bodyLimitBytes: 32 * 1024 * 1024, models: {} };
  }
}

function copyButton(label: string, text: () => string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary' }, label);
  button.addEventListener('click', () => {
    void navigator.clipboard?.writeText(text()).then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Copy failed: select the text'),
    );
  });
  return button;
}

/**
 * The model a first visit starts on: a text-to-video model (no media parameter at all), so that
 * Generate works with nothing but a prompt.
 */
function startingModel(models: readonly ModelInfo[]): ModelInfo | undefined {
  const properties = (m: ModelInfo): string[] => Object.keys((m.schema['properties'] as Record<string, unknown> | undefined) ?? {});
  const textOnly = (m: ModelInfo): boolean => !properties(m).some((name) => name in ACCEPT);
  return models.find((m) => m.kind === 'video' && textOnly(m)) ?? models.find(textOnly) ?? models[0];
}

/** A request as a history entry keeps it: data URLs (files) are too large to keep and left out. */
function keptRequest(body: Record<string, unknown>): Record<string, unknown> {
  const kept = (value: unknown): boolean => !(typeof value === 'string' && value.startsWith('data:'));
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value)) out[name] = value.filter(kept);
    else if (kept(value)) out[name] = value;
  }
  return out;
}

const hashModel = (): string | undefined => {
  const match = /(?:^#|&)model=([^&]+)/.exec(location.hash);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
};

function main(): void {
  const root = document.getElementById('app');
  if (!root) return;
  const hints = readHints();
  const api = new Api(() => keyInput.value.trim());
  let models: ModelInfo[] = [];
  let current: { model: ModelInfo; form: ModelForm } | undefined;
  let cancelAvailable = false;

  // --- key, views --------------------------------------------------------------------------
  const keyId = uid('api-key');
  const keyInput = h('input', { id: keyId, type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'mg_…' });
  keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
  const keyError = h('p', { class: 'error', role: 'alert', hidden: true });
  const keyRole = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  const keyBar = h(
    'section',
    { class: 'panel keybar', 'aria-label': 'Connection' },
    h(
      'div',
      { class: 'field' },
      h('label', { for: keyId }, 'API key'),
      keyInput,
      h(
        'small',
        { class: 'hint' },
        'Kept in this tab only (sessionStorage) and sent as Authorization: Bearer on each call. A client key generates; an admin key manages keys.',
      ),
      keyError,
      keyRole,
    ),
  );
  const tab = (label: string, panel: string): HTMLButtonElement =>
    h('button', { type: 'button', class: 'tab', role: 'tab', id: `tab-${panel}`, 'aria-controls': panel, 'aria-selected': 'false' }, label);
  const tabButtons: Record<View, HTMLButtonElement> = {
    generate: tab('Generate', 'view-generate'),
    usage: tab('Usage', 'view-usage'),
    keys: tab('Keys', 'view-keys'),
  };
  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views', hidden: true }, tabButtons.generate, tabButtons.usage, tabButtons.keys);
  const usagePanel = new UsagePanel(api);
  let keysPage: KeysPage | undefined;
  const keysSlot = h('div', { class: 'view', id: 'view-keys', role: 'tabpanel', 'aria-labelledby': 'tab-keys', hidden: true });
  const usageSlot = h('div', { class: 'view', id: 'view-usage', role: 'tabpanel', 'aria-labelledby': 'tab-usage', hidden: true }, usagePanel.element);

  // --- model -------------------------------------------------------------------------------
  const modelId = uid('model');
  const modelSelect = h('select', { id: modelId, disabled: true }, h('option', { value: '' }, 'Enter the API key first'));
  const picker = new ModelPicker((id) => {
    selectModel(id);
    modelSelect.focus();
  });
  const reference = (model: ModelInfo): Node => {
    const price = priceLabel(model.pricing);
    return h('span', {}, price === '' ? '' : `${price} · `, h('a', { href: `/docs#${encodeURIComponent(model.id)}` }, 'reference'));
  };
  const modelCard = new ModelCard(reference);
  const connect = h(
    'section',
    { class: 'panel connect', 'aria-label': 'Model choice' },
    picker.element,
    h('div', { class: 'field' }, h('label', { for: modelId }, 'Model'), modelSelect),
    modelCard.element,
  );

  // --- form --------------------------------------------------------------------------------
  const fieldsSlot = h('div', {});
  const checkId = uid('check-first');
  const checkFirst = h('input', { id: checkId, type: 'checkbox', checked: true });
  const bodySize = h('small', { class: 'hint', 'aria-live': 'polite' });
  const generate = h('button', { type: 'submit', disabled: true }, 'Generate');
  const estimate = new RunEstimate();
  const refusal = h('div', { class: 'refusal', hidden: true });
  const form = h(
    'form',
    { class: 'panel request', 'aria-label': 'Request', novalidate: true },
    h('h2', {}, 'Parameters'),
    fieldsSlot,
    estimate.element,
    h('div', { class: 'actions' }, generate, h('span', { class: 'check' }, checkFirst, h('label', { for: checkId }, 'Check in the browser first')), bodySize),
    refusal,
  );

  // --- result ------------------------------------------------------------------------------
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }, 'No task yet.');
  const billing = h('p', { class: 'billing hint', hidden: true });
  const progress = h('progress', { max: 100, value: 0, 'aria-label': 'progress' });
  const cancelButton = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Cancel');
  const media = h('div', { class: 'media-result' });
  const taskJson = h('pre', { class: 'json', tabindex: 0 });
  const curl = h('pre', { class: 'snippet', tabindex: 0 });
  const sdk = h('pre', { class: 'snippet', tabindex: 0 });
  let lastCurl = '';
  let lastSdk = '';
  const result = h(
    'section',
    { class: 'panel result', 'aria-label': 'Result' },
    h('h2', {}, 'Result'),
    status,
    billing,
    h('div', { class: 'progress-row' }, progress, cancelButton),
    media,
    h('details', {}, h('summary', {}, 'Task JSON'), taskJson),
    h(
      'details',
      { open: true },
      h('summary', {}, 'curl'),
      curl,
      copyButton('Copy curl', () => lastCurl),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'SDK (TypeScript)'),
      sdk,
      copyButton('Copy SDK call', () => lastSdk),
    ),
  );

  let shown: TaskView | undefined;
  const showTask = (task: TaskView): void => {
    shown = task;
    const percent = Math.max(0, Math.min(100, task.progress));
    progress.value = percent;
    replace(status, `${task.id}: ${task.status}, ${percent}%${task.failure ? ` (${task.failure})` : ''}`);
    status.dataset['status'] = task.status;
    billing.hidden = task.usage === null;
    if (task.usage) {
      const { seconds, images, cost, currency } = task.usage;
      // No amount for a cost of 0: without a pricing file every task costs 0, and "USD 0.00" would say it was priced.
      const charged = cost > 0 ? ` · ${currency} ${amount(cost)}` : '';
      replace(billing, `Billed: ${task.kind === 'video' ? `${seconds} s` : `${images} image${images === 1 ? '' : 's'}`}${charged}`);
    }
    cancelButton.hidden = !cancelAvailable || isFinal(task.status);
    replace(taskJson, JSON.stringify(task.raw, null, 2));
    const url = task.outputs[0];
    if (task.status === 'completed' && url && media.dataset['url'] !== url) {
      media.dataset['url'] = url;
      const player =
        task.kind === 'video'
          ? h('video', { src: url, controls: true, preload: 'auto', playsinline: true, 'aria-label': `video of ${task.id}` })
          : h('img', { src: url, alt: `image of ${task.id}` });
      replace(
        media,
        player,
        h(
          'p',
          {},
          h('a', { href: url, download: `${task.id}.${task.kind === 'video' ? 'mp4' : 'png'}`, class: 'button' }, 'Download'),
          ' ',
          h('a', { href: url, target: '_blank', rel: 'noopener' }, 'Open the output URL'),
        ),
      );
    } else if (task.status !== 'completed' && media.dataset['url'] !== '') {
      media.dataset['url'] = '';
      replace(media);
    }
  };
  /** Before a new request: the previous task's result is no longer what the panel is about. */
  const clearShown = (): void => {
    shown = undefined;
    progress.value = 0;
    status.dataset['status'] = '';
    billing.hidden = true;
    cancelButton.hidden = true;
    media.dataset['url'] = '';
    replace(media);
    replace(taskJson);
  };
  const follow = (task: TaskView): void => {
    const controller = new AbortController();
    watch(
      api,
      task,
      (next) => {
        taskHistory.update(next);
        if (shown?.id === next.id) showTask(next);
        if (isFinal(next.status)) void refreshKeyFacts();
      },
      controller.signal,
    ).catch((error: unknown) => {
      if (shown?.id === task.id) replace(status, `Following ${task.id} failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  };
  cancelButton.addEventListener('click', () => {
    if (!shown) return;
    void api.cancel(shown).then(
      (task) => {
        taskHistory.update(task);
        showTask(task);
      },
      (error: unknown) => replace(status, `Cancel refused: ${error instanceof ApiRefusal ? error.text : String(error)}`),
    );
  });

  // --- history -----------------------------------------------------------------------------
  const taskHistory = new History(api, {
    open: (task) => {
      // The form as it was: the task's model, and its parameters when this tab made it.
      if (task.model && models.some((m) => m.id === task.model)) {
        if (current?.model.id !== task.model) selectModel(task.model);
        if (task.request) current?.form.fill(task.request);
      }
      showTask(task);
      result.scrollIntoView({ block: 'start' });
    },
    cancelAvailable: () => cancelAvailable,
    priced: () => models.some((m) => m.pricing !== undefined),
  });

  const generateView = h(
    'div',
    { class: 'view columns', id: 'view-generate', role: 'tabpanel', 'aria-labelledby': 'tab-generate' },
    h('div', { class: 'column' }, connect, form),
    h('div', { class: 'column' }, result, taskHistory.element),
  );
  root.append(keyBar, generateView, usageSlot, keysSlot);
  // In the header, before the key in the tab order: Tab from the key still reaches the model.
  const header = document.querySelector('header.top');
  if (header) header.insertBefore(tabs, header.querySelector('nav'));
  else root.prepend(tabs);

  const show = (view: View): void => {
    generateView.hidden = view !== 'generate';
    usageSlot.hidden = view !== 'usage';
    keysSlot.hidden = view !== 'keys';
    for (const [name, button] of Object.entries(tabButtons)) button.setAttribute('aria-selected', String(name === view));
    if (view === 'usage') void usagePanel.load();
  };
  tabButtons.generate.addEventListener('click', () => show('generate'));
  tabButtons.usage.addEventListener('click', () => show('usage'));
  tabButtons.keys.addEventListener('click', () => show('keys'));
  /** Which views a key of this role has; the tab bar shows only when there is a choice. */
  const setRole = (role: 'client' | 'admin' | 'none'): void => {
    tabs.hidden = role !== 'client';
    tabButtons.generate.hidden = role !== 'client';
    tabButtons.usage.hidden = role !== 'client';
    tabButtons.keys.hidden = role !== 'admin';
    replace(keyRole, role === 'admin' ? 'Admin key: it manages client keys and reads their usage; it cannot generate.' : '');
    if (role === 'admin') show('keys');
    else if (!keysSlot.hidden || role === 'none') show('generate');
  };

  // --- behaviour ---------------------------------------------------------------------------
  const updateBodySize = (): void => {
    if (!current) return;
    estimate.update(current.model, current.form.body());
    const bytes = new TextEncoder().encode(JSON.stringify(current.form.body())).length;
    const modelLimit = hints.models[current.model.id]?.maxBodyBytes;
    replace(
      bodySize,
      `Request body ${formatBytes(bytes)} of ${formatBytes(hints.bodyLimitBytes)}${modelLimit !== undefined ? ` (this model: at most ${formatBytes(modelLimit)})` : ''}`,
    );
  };

  const selectModel = (id: string): void => {
    const model = models.find((m) => m.id === id) ?? models[0];
    if (!model) return;
    modelSelect.value = model.id;
    const built = buildForm(model, { bodyLimitBytes: hints.bodyLimitBytes, hints: hints.models[model.id] ?? {} });
    current = { model, form: built };
    built.onChange(updateBodySize);
    replace(fieldsSlot, built.element);
    modelCard.show(model);
    refusal.hidden = true;
    generate.disabled = false;
    updateBodySize();
    if (hashModel() !== model.id) window.history.replaceState(null, '', `#model=${encodeURIComponent(model.id)}`);
  };

  /**
   * What the key's recent tasks and usage say: the model card's run time and example, the
   * history's prompts, the budget left. An older server without these operations leaves them out.
   */
  const refreshKeyFacts = async (): Promise<void> => {
    const [recent, usage] = await Promise.all([api.recent().catch(() => undefined), api.usage().catch(() => undefined)]);
    modelCard.setRecent(recent?.models);
    taskHistory.setRecent(recent?.data);
    estimate.setBudget(usage?.budget, usage?.currency ?? '');
  };

  const enterAdmin = async (): Promise<void> => {
    keysPage = new KeysPage(api);
    replace(keysSlot, keysPage.element);
    setRole('admin');
    await keysPage.load();
  };

  const loadModels = async (): Promise<void> => {
    keyError.hidden = true;
    const key = keyInput.value.trim();
    if (key === '') {
      setRole('none');
      return;
    }
    // Answers arrive after a pause in typing: one for a key the field no longer holds is dropped
    // (the Api reads the field at each call, so a late answer would be judged against another key).
    const stale = (): boolean => keyInput.value.trim() !== key;
    let loaded: ModelInfo[];
    try {
      loaded = await api.models();
    } catch (error) {
      if (stale()) return;
      askedFor = ''; // the same key may be tried again (the server was down, the key fixed upstream)
      // An admin key is refused on client operations: it may be one.
      const admin = error instanceof ApiRefusal && error.status === 401 && (await api.isAdmin().catch(() => false));
      if (stale()) return;
      if (admin) {
        await enterAdmin();
        return;
      }
      setRole('none');
      keyError.hidden = false;
      replace(
        keyError,
        error instanceof ApiRefusal ? `The server refused the key (HTTP ${error.status} ${error.code}).` : `The server could not be reached: ${String(error)}`,
      );
      return;
    }
    if (stale()) return;
    models = loaded;
    // The display name, and the price beside it when the server has a pricing file; grouped by
    // kind and vendor family, as the picker groups them.
    const option = (m: ModelInfo): HTMLElement => h('option', { value: m.id }, m.pricing === undefined ? nameOf(m) : `${nameOf(m)} — ${priceLabel(m.pricing)}`);
    const groups = new Map<string, ModelInfo[]>();
    for (const kind of ['video', 'image'] as const)
      for (const m of models.filter((each) => each.kind === kind))
        groups.set(`${kind} · ${familyOf(m)}`, [...(groups.get(`${kind} · ${familyOf(m)}`) ?? []), m]);
    replace(modelSelect, ...[...groups].map(([label, members]) => h('optgroup', { label }, ...members.map(option))));
    picker.setModels(models);
    modelSelect.disabled = false;
    setRole('client');
    if (!usageSlot.hidden) void usagePanel.load();
    selectModel(hashModel() ?? startingModel(models)?.id ?? '');
    taskHistory.setModels(models);
    void refreshKeyFacts();
    // Operations added after the seed (decisions §8): used when this server has them.
    const capabilities = await readCapabilities();
    cancelAvailable = capabilities.cancel;
    setEventsListed(capabilities.events);
    await taskHistory.useList(capabilities.list);
  };

  // The models load as soon as a key is typed or pasted (after a short pause), not only when
  // the field loses focus; the same key is not asked for twice.
  let askedFor = '';
  let pause: ReturnType<typeof setTimeout> | undefined;
  const keyChanged = (): void => {
    clearTimeout(pause);
    const key = keyInput.value.trim();
    if (key === askedFor) return;
    askedFor = key;
    sessionStorage.setItem(KEY_STORAGE, key);
    void loadModels();
  };
  keyInput.addEventListener('input', () => {
    clearTimeout(pause);
    pause = setTimeout(keyChanged, 400);
  });
  keyInput.addEventListener('change', keyChanged);
  modelSelect.addEventListener('change', () => selectModel(modelSelect.value));
  window.addEventListener('hashchange', () => {
    const id = hashModel();
    if (id && id !== current?.model.id && models.some((m) => m.id === id)) selectModel(id);
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!current) return;
    const { model, form: built } = current;
    built.clearErrors();
    refusal.hidden = true;
    const body = built.body();
    const json = JSON.stringify(body);
    if (checkFirst.checked) {
      const problem = validateRequest(model.kind, model.schema, hints.models[model.id] ?? {}, body, new TextEncoder().encode(json).length);
      if (problem) {
        built.showError(problem.param, problem.message);
        return;
      }
    }
    lastCurl = curlSnippet(model, json, location.origin);
    lastSdk = sdkSnippet(model, body, location.origin);
    replace(curl, shortenDataUrls(lastCurl));
    replace(sdk, shortenDataUrls(lastSdk));
    generate.disabled = true;
    clearShown();
    replace(status, `Sending to ${model.id}…`);
    api
      .create(model, json)
      .then((task) => {
        taskHistory.add({ ...task, request: keptRequest(body) });
        showTask(task);
        follow(task);
        replace(status, `${task.id}: ${task.status}, ${task.progress}% (following by ${transport() === 'events' ? 'events' : 'polling'})`);
      })
      .catch((error: unknown) => {
        if (error instanceof ApiRefusal) {
          if (error.param) built.showError(error.param, typeof error.body === 'object' && error.body !== null ? messageOf(error.body) : error.text);
          refusal.hidden = false;
          const shownText = typeof error.body === 'object' && error.body !== null ? JSON.stringify(error.body, null, 2) : error.text;
          const toUsage = h('button', { type: 'button', class: 'secondary' }, 'See usage and budget');
          toUsage.addEventListener('click', () => show('usage'));
          replace(
            refusal,
            h('p', {}, `The server refused the request (HTTP ${error.status}):`),
            error.code === 'budget_exceeded' ? h('p', {}, 'This key’s budget cannot hold the most this task could cost. ', toUsage) : null,
            h('pre', { class: 'json' }, shownText),
          );
          replace(status, 'Refused.');
        } else replace(status, `The request failed: ${String(error)}`);
      })
      .finally(() => (generate.disabled = false));
  });

  askedFor = keyInput.value.trim();
  void loadModels();
}

function messageOf(body: object): string {
  const record = body as Record<string, unknown>;
  const error = (typeof record['error'] === 'object' && record['error'] !== null ? record['error'] : record) as Record<string, unknown>;
  return typeof error['message'] === 'string' ? error['message'] : JSON.stringify(body);
}

main();
