import { ApiRefusal, isFinal, isMissingOperation, type Api, type RecentTask, type TaskView } from './api.js';
import { amount } from './chart.js';
import { h, replace, uid } from './dom.js';
import { videoThumb } from './thumbs.js';

/**
 * The tasks of this key: the list operation of decisions §8.2 (both families, paged,
 * filtered by status and model) when the server answers it, else the tasks made in this tab
 * (kept in sessionStorage, like the key). Running tasks get a Cancel button when the server has
 * the cancel operation (decisions §8.1); final ones show what they cost.
 */

const TAB_STORAGE = 'mediagate.tasks';
const PAGE = 20;
const IMAGE_WORDS: Record<string, string> = { queued: 'QUEUED', processing: 'IN_PROGRESS', completed: 'SUCCESS', failed: 'FAILURE', cancelled: 'CANCELLED' };
// Ids start with the creation time after their family prefix (docs/interface.md), so they sort by it.
const newestFirst = (a: TaskView, b: TaskView): number => (a.id.slice(4) < b.id.slice(4) ? 1 : a.id.slice(4) > b.id.slice(4) ? -1 : 0);

interface Options {
  readonly open: (task: TaskView) => void;
  readonly cancelAvailable: () => boolean;
  /** Whether the server prices anything (its models carry `pricing`): costs are shown only then. */
  readonly priced: () => boolean;
}

export class History {
  readonly element: HTMLElement;
  private readonly tab: TaskView[];
  private listed: TaskView[] = [];
  private listAvailable = false;
  /** False until the key is entered and the server's operations are known. */
  private connected = false;
  /** Bumped by each reload: a page still arriving for an earlier filter is dropped, not mixed in. */
  private generation = 0;
  private kindOf = new Map<string, 'video' | 'image'>();
  private nameOf = new Map<string, string>();
  /** Prompts and asked sizes by task id (`GET /v1/tasks/recent`): the lists carry neither. */
  private recent = new Map<string, RecentTask>();
  private cursors: { video: string | null | undefined; image: string | null | undefined } = { video: undefined, image: undefined };
  private readonly list = h('ul', { class: 'history' });
  private readonly caption = h('p', { class: 'hint' });
  private readonly statusFilter: HTMLSelectElement;
  private readonly modelFilter: HTMLSelectElement;
  private readonly filters: HTMLElement;
  private readonly more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');

  constructor(
    private readonly api: Api,
    private readonly options: Options,
  ) {
    let saved: TaskView[];
    try {
      saved = JSON.parse(sessionStorage.getItem(TAB_STORAGE) ?? '[]') as TaskView[];
    } catch {
      saved = [];
    }
    this.tab = saved;
    const statusId = uid('status-filter');
    const modelId = uid('model-filter');
    this.statusFilter = h('select', { id: statusId }, h('option', { value: '' }, 'any'), ...Object.keys(IMAGE_WORDS).map((s) => h('option', { value: s }, s)));
    this.modelFilter = h('select', { id: modelId }, h('option', { value: '' }, 'any'));
    this.filters = h(
      'div',
      { class: 'filters', hidden: true },
      h('span', {}, h('label', { for: statusId }, 'Status filter'), this.statusFilter),
      h('span', {}, h('label', { for: modelId }, 'Model filter'), this.modelFilter),
    );
    this.statusFilter.addEventListener('change', () => void this.reload());
    this.modelFilter.addEventListener('change', () => void this.reload());
    this.more.addEventListener('click', () => void this.page());
    const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
    refresh.addEventListener('click', () => void (this.listAvailable ? this.reload() : this.refreshTab()));
    this.element = h(
      'section',
      { class: 'panel history-panel', 'aria-label': 'History' },
      h('h2', {}, 'History'),
      this.caption,
      this.filters,
      this.list,
      h('div', { class: 'actions' }, this.more, refresh),
    );
    this.render();
  }

  setModels(models: readonly { readonly id: string; readonly kind: 'video' | 'image'; readonly display_name?: string }[]): void {
    this.kindOf = new Map(models.map((model) => [model.id, model.kind]));
    this.nameOf = new Map(models.map((model) => [model.id, model.display_name ?? model.id]));
    replace(this.modelFilter, h('option', { value: '' }, 'any'), ...models.map((model) => h('option', { value: model.id }, model.display_name ?? model.id)));
  }

  setRecent(tasks: readonly RecentTask[] | undefined): void {
    for (const task of tasks ?? []) this.recent.set(task.id, task);
    this.render();
  }

  /** What the row says of the task: its prompt, and the seconds or size asked for. */
  private described(task: TaskView): { prompt: string; asked: string } {
    const recent = this.recent.get(task.id);
    const request = task.request;
    const prompt = recent?.prompt ?? (typeof request?.['prompt'] === 'string' ? request['prompt'] : '');
    const seconds =
      task.usage && task.kind === 'video' ? task.usage.seconds : (recent?.duration ?? (typeof request?.['duration'] === 'number' ? request['duration'] : null));
    const size = recent?.size ?? (typeof request?.['size'] === 'string' ? request['size'] : null);
    const asked = task.kind === 'video' ? (seconds === null ? '' : `${seconds} s${recent?.resolution ? ` · ${recent.resolution}` : ''}`) : (size ?? '');
    return { prompt, asked };
  }

  /** What this tab knows of a task beyond what a list answers: its model and request. */
  private known(task: TaskView): TaskView {
    const mine = this.tab.find((t) => t.id === task.id);
    const model = task.model || mine?.model || this.recent.get(task.id)?.model || (task.kind === 'image' ? this.modelFilter.value : '');
    return { ...task, model, ...(mine?.request ? { request: mine.request } : {}) };
  }

  add(task: TaskView): void {
    this.tab.unshift(task);
    if (this.listAvailable) this.listed.unshift(task);
    this.save();
    this.render();
  }

  update(task: TaskView): void {
    for (const list of [this.tab, this.listed]) {
      const index = list.findIndex((t) => t.id === task.id);
      const before = list[index];
      if (index >= 0) list[index] = { ...task, model: task.model || (before?.model ?? ''), ...(before?.request ? { request: before.request } : {}) };
    }
    this.save();
    this.render();
  }

  /** Uses the list operation when the server has it; one that answers 404/405 after all is dropped. */
  async useList(listed: boolean): Promise<void> {
    this.connected = true;
    this.listAvailable = listed;
    if (!listed) {
      this.render();
      return;
    }
    try {
      await this.reload();
    } catch (error) {
      if (!isMissingOperation(error)) throw error;
      this.listAvailable = false;
      this.render();
    }
  }

  private async reload(): Promise<void> {
    this.generation += 1;
    this.listed = [];
    this.cursors = { video: undefined, image: undefined };
    await this.page();
  }

  private async page(): Promise<void> {
    const generation = this.generation;
    const status = this.statusFilter.value;
    const model = this.modelFilter.value;
    const families: ('video' | 'image')[] = ['video', 'image'];
    for (const kind of families) {
      const after = this.cursors[kind];
      if (after === null) continue;
      // A model filter names one family's model: the other family's list would refuse it (400,
      // which the browser logs as an error), and has none of its tasks anyway.
      const family = model ? this.kindOf.get(model) : undefined;
      if (family !== undefined && family !== kind) {
        this.cursors[kind] = null;
        continue;
      }
      try {
        const page = await this.api.list(kind, {
          limit: PAGE,
          ...(after ? { after } : {}),
          ...(status ? { status: kind === 'image' ? (IMAGE_WORDS[status] ?? status) : status } : {}),
          ...(model ? { model } : {}),
        });
        if (generation !== this.generation) return;
        this.listed.push(...page.items);
        this.cursors[kind] = page.hasMore ? page.lastId : null;
      } catch (error) {
        if (generation !== this.generation) return;
        // A model filter of the other family is refused by that family's list: it has none of them.
        if (!(error instanceof ApiRefusal) || error.status !== 400) throw error;
        this.cursors[kind] = null;
      }
    }
    this.listed.sort(newestFirst);
    this.render();
  }

  private async refreshTab(): Promise<void> {
    for (const task of this.tab.filter((t) => !isFinal(t.status))) {
      try {
        this.update(await this.api.get(task.kind, task.id, task.model));
      } catch {
        // Gone or refused: keep what we knew.
      }
    }
  }

  private save(): void {
    sessionStorage.setItem(TAB_STORAGE, JSON.stringify(this.tab.slice(0, 100).map((t) => ({ ...t, raw: null }))));
  }

  render(): void {
    this.caption.textContent = !this.connected
      ? 'Enter the API key above to see its tasks.'
      : this.listAvailable
        ? 'Tasks of this API key, newest first.'
        : 'Tasks made in this tab (this server has no list operation).';
    this.filters.hidden = !this.listAvailable;
    this.more.hidden = !this.listAvailable || (this.cursors.video === null && this.cursors.image === null);
    const tasks = (this.listAvailable ? this.listed : this.tab).map((task) => this.known(task));
    if (tasks.length === 0) {
      const filtered = this.listAvailable && (this.statusFilter.value !== '' || this.modelFilter.value !== '');
      replace(this.list, h('li', { class: 'empty' }, filtered ? 'No tasks match these filters.' : this.connected ? 'No tasks yet.' : ''));
      return;
    }
    replace(
      this.list,
      ...tasks.map((task) => {
        const open = h('button', { type: 'button', class: 'link' }, task.id);
        open.addEventListener('click', () => this.options.open(task));
        const output = task.status === 'completed' ? task.outputs[0] : undefined;
        // A glimpse of the result: the image itself, or the video's first frame (no sound, no autoplay).
        const thumb =
          output === undefined
            ? h('span', { class: 'thumb none', 'aria-hidden': 'true' })
            : task.kind === 'image'
              ? h('img', { class: 'thumb', src: output, alt: '', loading: 'lazy' })
              : videoThumb(output);
        const { prompt, asked } = this.described(task);
        const cancel = this.options.cancelAvailable() && !isFinal(task.status) ? h('button', { type: 'button', class: 'secondary' }, 'Cancel') : null;
        cancel?.addEventListener(
          'click',
          () =>
            void this.api.cancel(task).then(
              (next) => this.update(next),
              () => undefined,
            ),
        );
        return h(
          'li',
          { 'data-task': task.id, 'data-status': task.status },
          thumb,
          h(
            'div',
            { class: 'what' },
            h('p', { class: 'prompt', title: prompt }, prompt === '' ? h('em', {}, 'prompt not known here') : prompt),
            h(
              'p',
              { class: 'meta' },
              h('span', { class: 'model', title: task.model }, this.nameOf.get(task.model) ?? task.model),
              asked === '' ? null : h('span', { class: 'asked' }, asked),
              h('span', { class: `badge ${task.status}` }, `${task.status} ${task.progress}%`),
              // A server without a pricing file prices nothing: "USD 0.00" on every task would be noise.
              task.usage && this.options.priced() ? h('span', { class: 'cost' }, `${task.usage.currency} ${amount(task.usage.cost)}`) : null,
              open,
              cancel,
            ),
          ),
        );
      }),
    );
  }
}
