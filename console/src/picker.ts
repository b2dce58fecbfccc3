import type { ModelInfo } from './api.js';
import { h, replace, uid } from './dom.js';

/**
 * The model picker: type part of a name (or id, family, summary) and see the matching models,
 * grouped by kind and vendor family, each with its display name, what inputs it takes and its
 * summary; the input chips narrow the list to models taking that input. Choosing one calls
 * `choose`; the `<select>` beside it stays the compact, keyboard-native choice.
 */

export type InputTag = 'text' | 'first frame' | 'last frame' | 'reference images';
export const INPUT_TAGS: readonly InputTag[] = ['text', 'first frame', 'last frame', 'reference images'];

const MEDIA_FORMAT = 'media-input';

/** What a model takes, read from its request schema: a prompt alone, a first frame, a last frame, reference images. */
export function inputsOf(model: ModelInfo): InputTag[] {
  const properties = (model.schema['properties'] as Record<string, Record<string, unknown>> | undefined) ?? {};
  const required = new Set((model.schema['required'] as string[] | undefined) ?? []);
  const isMedia = (name: string): boolean => {
    const prop = properties[name];
    const items = prop?.['items'] as Record<string, unknown> | undefined;
    return (
      prop?.['format'] === MEDIA_FORMAT || items?.['format'] === MEDIA_FORMAT || ['image', 'end_image', 'images', 'videos', 'audios', 'audio'].includes(name)
    );
  };
  const tags: InputTag[] = [];
  if (!Object.keys(properties).some((name) => required.has(name) && isMedia(name))) tags.push('text');
  if ('image' in properties) tags.push('first frame');
  if ('end_image' in properties) tags.push('last frame');
  if ('images' in properties) tags.push('reference images');
  return tags;
}

export const nameOf = (model: ModelInfo): string => model.display_name ?? model.id;
export const familyOf = (model: ModelInfo): string => model.family ?? model.id.split(/[/-]/)[0] ?? model.id;

/** Every word typed is found in the name, id, family or summary (case-insensitive). */
export function matches(model: ModelInfo, query: string): boolean {
  const text = [nameOf(model), model.id, familyOf(model), model.summary ?? model.description].join(' ').toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '')
    .every((word) => text.includes(word));
}

export class ModelPicker {
  readonly element: HTMLElement;
  readonly search: HTMLInputElement;
  private models: readonly ModelInfo[] = [];
  private readonly chosenTags = new Set<InputTag>();
  private readonly list: HTMLElement;
  private readonly count = h('small', { class: 'hint', 'aria-live': 'polite' });
  private readonly chips: HTMLButtonElement[];
  private readonly browse = h('button', { type: 'button', class: 'secondary', 'aria-expanded': 'false' }, 'Browse all models');

  constructor(private readonly choose: (id: string) => void) {
    const searchId = uid('find-model');
    const listId = uid('model-list');
    this.search = h('input', {
      id: searchId,
      type: 'search',
      placeholder: 'Type part of a name: fox, famw 3, image, h3 max…',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-controls': listId,
      disabled: true,
    });
    this.list = h('div', { id: listId, class: 'picker-list', role: 'listbox', 'aria-label': 'Matching models', hidden: true });
    this.chips = INPUT_TAGS.map((tag) => {
      const chip = h('button', { type: 'button', class: 'chip', 'aria-pressed': 'false', 'data-input': tag }, tag);
      chip.addEventListener('click', () => {
        if (this.chosenTags.has(tag)) this.chosenTags.delete(tag);
        else this.chosenTags.add(tag);
        chip.setAttribute('aria-pressed', String(this.chosenTags.has(tag)));
        this.render(true);
      });
      return chip;
    });
    this.search.addEventListener('input', () => this.render(true));
    this.search.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') this.close();
      if (event.key === 'Enter') {
        event.preventDefault();
        this.list.querySelector<HTMLButtonElement>('button.model-card')?.click();
      }
      if (event.key === 'ArrowDown') {
        event.preventDefault();
        this.list.querySelector<HTMLButtonElement>('button.model-card')?.focus();
      }
    });
    this.browse.addEventListener('click', () => (this.list.hidden ? this.render(true) : this.close()));
    this.element = h(
      'div',
      { class: 'picker' },
      h('label', { for: searchId }, 'Find a model'),
      h('div', { class: 'picker-bar' }, this.search, this.browse),
      h('div', { class: 'chips', role: 'group', 'aria-label': 'Takes as input' }, h('span', { class: 'hint' }, 'Takes:'), ...this.chips),
      this.count,
      this.list,
    );
  }

  setModels(models: readonly ModelInfo[]): void {
    this.models = models;
    this.search.disabled = models.length === 0;
    this.render(!this.list.hidden);
  }

  close(): void {
    this.list.hidden = true;
    this.browse.setAttribute('aria-expanded', 'false');
    replace(this.count);
  }

  private render(open: boolean): void {
    if (!open) return;
    const query = this.search.value.trim();
    const shown = this.models.filter((model) => matches(model, query) && [...this.chosenTags].every((tag) => inputsOf(model).includes(tag)));
    this.list.hidden = false;
    this.browse.setAttribute('aria-expanded', 'true');
    replace(this.count, `${shown.length} of ${this.models.length} models`);
    if (shown.length === 0) {
      replace(this.list, h('p', { class: 'empty' }, 'No model matches. Try fewer words, or clear the input chips.'));
      return;
    }
    // Groups in the listing's order: kind, then vendor family as they first appear.
    const groups = new Map<string, ModelInfo[]>();
    for (const model of shown) {
      const key = `${model.kind} · ${familyOf(model)}`;
      groups.set(key, [...(groups.get(key) ?? []), model]);
    }
    replace(
      this.list,
      ...[...groups].map(([label, models]) =>
        h('div', { class: 'picker-group', role: 'group', 'aria-label': label }, h('h3', {}, label), ...models.map((model) => this.card(model))),
      ),
    );
  }

  private card(model: ModelInfo): HTMLButtonElement {
    const card = h(
      'button',
      { type: 'button', class: 'model-card', role: 'option', 'data-model': model.id },
      h('strong', {}, nameOf(model)),
      h('span', { class: 'tags' }, inputsOf(model).join(' · ')),
      h('small', {}, model.summary ?? model.description),
      h('code', {}, model.id),
    );
    card.addEventListener('click', () => {
      this.choose(model.id);
      this.close();
    });
    return card;
  }
}
