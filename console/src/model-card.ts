import type { ModelInfo, RecentModel } from './api.js';
import { h, replace } from './dom.js';
import { familyOf, inputsOf, nameOf } from './picker.js';
import { frameOf } from './thumbs.js';

/**
 * The chosen model, as a model page shows it: display name, kind, family and inputs, the
 * description, the median run time of this key's recent tasks of it, and an example output (the
 * key's newest completed task of it), else "no example yet".
 */

/** "850 ms", "14 s", "2 min 5 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 === 0 ? '' : ` ${s % 60} s`}`;
}

/** `name` spans of a description (parameter names) as code, not as raw backticks. */
export function withCode(text: string): (string | HTMLElement)[] {
  return text.split('`').map((part, index) => (index % 2 === 1 ? h('code', {}, part) : part));
}

/** The example video, its poster the frame the history's thumbnail shows (no black box before Play). */
function examplePlayer(url: string, prompt: string): HTMLVideoElement {
  const video = h('video', { src: url, controls: true, muted: true, preload: 'none', playsinline: true, 'aria-label': `example: ${prompt}` });
  void frameOf(url).then((frame) => {
    if (frame !== null) video.poster = frame;
  });
  return video;
}

export class ModelCard {
  readonly element = h('div', { class: 'model-card-view', 'aria-live': 'polite' });
  private model: ModelInfo | undefined;
  private recent = new Map<string, RecentModel>();
  /** Whether the server answered the recent-tasks operation: without it, nothing is said of runs. */
  private known = false;

  constructor(private readonly reference: (model: ModelInfo) => Node) {}

  show(model: ModelInfo): void {
    this.model = model;
    this.render();
  }

  setRecent(models: readonly RecentModel[] | undefined): void {
    this.known = models !== undefined;
    this.recent = new Map((models ?? []).map((entry) => [entry.model, entry]));
    this.render();
  }

  private render(): void {
    const model = this.model;
    if (!model) return;
    const stats = this.recent.get(model.id);
    const median = stats?.median_run_ms ?? null;
    const example = stats?.example ?? null;
    const runLine = !this.known
      ? null
      : h(
          'p',
          { class: 'run-time' },
          'Typical run time: ',
          median === null ? 'no completed task of this key yet' : h('strong', {}, duration(median)),
          median === null ? '' : ` (median of ${stats?.completed ?? 0} recent task${stats?.completed === 1 ? '' : 's'})`,
        );
    const exampleView = !this.known
      ? null
      : example === null
        ? h('p', { class: 'example empty' }, 'Example output: no example yet.')
        : h(
            'figure',
            { class: 'example', 'data-task': example.task_id },
            example.kind === 'video' ? examplePlayer(example.url, example.prompt) : h('img', { src: example.url, alt: `example: ${example.prompt}` }),
            h('figcaption', {}, 'Example output (your newest): ', h('q', {}, example.prompt)),
          );
    replace(
      this.element,
      h('h3', { class: 'model-name' }, nameOf(model)),
      h('p', { class: 'tags' }, [model.kind, familyOf(model), ...inputsOf(model)].join(' · ')),
      h('p', { class: 'about' }, ...withCode(model.description), ' ', this.reference(model)),
      runLine,
      exampleView,
    );
  }
}
