import type { ModelInfo } from './api.js';
import { formatBytes, h, replace, uid } from './dom.js';
import type { ModelHints, Schema } from './validate.js';

/**
 * A form generated from a model's JSON Schema: one field per property, labelled with the
 * parameter's name. Enums are selects (exact values), integers number inputs with their bounds
 * and default, booleans switches, media fields a URL or a file (sent as a data URL), arrays
 * lists with their item bounds, `extra.image_options` a list of option rows, and on image
 * models `size` and `width`/`height` are exclusive by a choice of mode.
 */

type Read = { set: false } | { set: true; value: unknown };

interface Field {
  readonly name: string;
  readonly element: HTMLElement;
  readonly error: HTMLElement;
  readonly read: () => Read;
  readonly focus: () => void;
  /** Puts a value back (a history entry reopened); absent where a value cannot be shown again. */
  readonly write?: (value: unknown) => void;
}

export interface ModelForm {
  readonly element: HTMLElement;
  readonly body: () => Record<string, unknown>;
  readonly showError: (param: string, message: string) => boolean;
  readonly clearErrors: () => void;
  readonly onChange: (listener: () => void) => void;
  /** The fields set to a request's values (those a field can show); the others left at their defaults. */
  readonly fill: (values: Readonly<Record<string, unknown>>) => void;
}

export interface FormLimits {
  readonly bodyLimitBytes: number;
  readonly hints: ModelHints;
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const types = (schema: Schema): string[] =>
  Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type']] : [];
const isMedia = (schema: Schema): boolean => schema['format'] === 'media-input';
/** The media parameters of the catalog, by name, and what a file picker for each accepts. */
export const ACCEPT: Record<string, string> = {
  image: 'image/*',
  end_image: 'image/*',
  images: 'image/*',
  videos: 'video/*',
  audios: 'audio/*',
  audio: 'audio/*',
};
const bound = (value: unknown, open: string): string => (typeof value === 'number' ? String(value) : open);

function constraintText(schema: Schema): string {
  const parts: string[] = [];
  if (typeof schema['minimum'] === 'number' || typeof schema['maximum'] === 'number')
    parts.push(`${bound(schema['minimum'], '…')} to ${bound(schema['maximum'], '…')}`);
  if (typeof schema['minItems'] === 'number' || typeof schema['maxItems'] === 'number')
    parts.push(`${bound(schema['minItems'], '0')} to ${bound(schema['maxItems'], '…')} items`);
  if (typeof schema['maxLength'] === 'number') parts.push(`at most ${schema['maxLength']} characters`);
  if (schema['default'] !== undefined) parts.push(`default ${JSON.stringify(schema['default'])}`);
  if (typeof schema['description'] === 'string') parts.push(schema['description']);
  return parts.join(' · ');
}

function shell(
  name: string,
  required: boolean,
  schema: Schema,
  control: HTMLElement,
  controlId: string,
  extra?: HTMLElement,
): { element: HTMLElement; error: HTMLElement } {
  const errorId = uid(`${name}-error`);
  const hintId = uid(`${name}-hint`);
  const error = h('p', { class: 'error', id: errorId, role: 'alert', hidden: true });
  control.setAttribute('aria-describedby', `${hintId} ${errorId}`);
  if (required) control.setAttribute('aria-required', 'true');
  const element = h(
    'div',
    { class: 'field', 'data-param': name },
    h('span', { class: 'label-row' }, h('label', { for: controlId }, name), required ? h('span', { class: 'required' }, 'required') : null),
    control,
    extra,
    h('small', { id: hintId, class: 'hint' }, constraintText(schema)),
    error,
  );
  return { element, error };
}

/** A URL or a file read as a data URL, with its size shown against the limits. */
function mediaInput(
  label: string,
  accept: string,
  limits: FormLimits,
  imageRule: boolean,
  changed: () => void,
): { element: HTMLElement; input: HTMLInputElement; read: () => string | undefined } {
  const id = uid(label);
  const input = h('input', { id, type: 'text', inputmode: 'url', placeholder: 'https://… or choose a file', autocomplete: 'off', spellcheck: 'false' });
  const fileId = uid(`${label}-file`);
  const file = h('input', { id: fileId, type: 'file', accept });
  const size = h('small', { class: 'size', 'aria-live': 'polite' });
  let dataUrl: string | undefined;
  file.addEventListener('change', () => {
    const chosen = file.files?.[0];
    dataUrl = undefined;
    if (!chosen) {
      replace(size);
      changed();
      return;
    }
    const reader = new FileReader();
    reader.addEventListener('load', () => {
      dataUrl = typeof reader.result === 'string' ? reader.result : undefined;
      input.value = '';
      input.placeholder = `file: ${chosen.name}`;
      const limitsText = [`${formatBytes(dataUrl?.length ?? 0)} as a data URL of the ${formatBytes(limits.bodyLimitBytes)} body limit`];
      if (limits.hints.maxBodyBytes !== undefined) limitsText.push(`this model's body limit ${formatBytes(limits.hints.maxBodyBytes)}`);
      if (imageRule && limits.hints.imageMaxBytes !== undefined) limitsText.push(`image at most ${formatBytes(limits.hints.imageMaxBytes)}`);
      const over =
        (imageRule && limits.hints.imageMaxBytes !== undefined && chosen.size > limits.hints.imageMaxBytes) || (dataUrl?.length ?? 0) > limits.bodyLimitBytes;
      size.className = over ? 'size over' : 'size';
      replace(size, `${chosen.name}: ${formatBytes(chosen.size)} (${limitsText.join('; ')})`);
      changed();
    });
    reader.readAsDataURL(chosen);
  });
  input.addEventListener('input', () => {
    if (input.value !== '') {
      dataUrl = undefined;
      file.value = '';
      input.placeholder = 'https://… or choose a file';
      replace(size);
    }
    changed();
  });
  const element = h('div', { class: 'media' }, input, h('span', { class: 'file' }, h('label', { for: fileId }, `${label} file`), file), size);
  return { element, input, read: () => dataUrl ?? (input.value.trim() === '' ? undefined : input.value.trim()) };
}

function scalarField(name: string, schema: Schema, required: boolean, limits: FormLimits, changed: () => void): Field {
  const id = uid(name);
  const kinds = types(schema);
  if (Array.isArray(schema['enum'])) {
    const values = schema['enum'] as unknown[];
    const select = h('select', { id, name });
    if (schema['default'] === undefined) select.append(h('option', { value: '' }, required ? '(choose)' : '(not set)'));
    for (const value of values) select.append(h('option', { value: String(value), selected: value === schema['default'] }, String(value)));
    select.addEventListener('change', changed);
    const { element, error } = shell(name, required, schema, select, id);
    return {
      name,
      element,
      error,
      focus: () => select.focus(),
      write: (value) => (select.value = String(value)),
      read: () => {
        if (select.value === '') return { set: false };
        const match = values.find((v) => String(v) === select.value);
        return { set: true, value: match };
      },
    };
  }
  if (kinds.includes('integer') || kinds.includes('number')) {
    const input = h('input', {
      id,
      name,
      type: 'number',
      step: kinds.includes('integer') ? 1 : 'any',
      min: typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined,
      max: typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined,
      value: typeof schema['default'] === 'number' ? schema['default'] : undefined,
    });
    input.addEventListener('input', changed);
    const { element, error } = shell(name, required, schema, input, id);
    return {
      name,
      element,
      error,
      focus: () => input.focus(),
      write: (value) => (input.value = String(value)),
      read: () => (input.value.trim() === '' ? { set: false } : { set: true, value: Number(input.value) }),
    };
  }
  if (kinds.includes('boolean')) {
    const input = h('input', { id, name, type: 'checkbox', role: 'switch', checked: schema['default'] === true });
    const state = h('span', { class: 'state' });
    let touched = schema['default'] !== undefined;
    const show = (): void => replace(state, touched ? (input.checked ? 'true' : 'false') : '(not set)');
    input.indeterminate = !touched;
    input.addEventListener('change', () => {
      touched = true;
      input.indeterminate = false;
      show();
      changed();
    });
    show();
    const { element, error } = shell(name, required, schema, input, id, state);
    element.classList.add('switch');
    const write = (value: unknown): void => {
      touched = true;
      input.indeterminate = false;
      input.checked = value === true;
      show();
    };
    return { name, element, error, focus: () => input.focus(), write, read: () => (touched ? { set: true, value: input.checked } : { set: false }) };
  }
  if (isMedia(schema)) {
    const media = mediaInput(name, ACCEPT[name] ?? '*/*', limits, name === 'image', changed);
    const { element, error } = shell(name, required, schema, media.input, media.input.id, media.element);
    // The URL box sits inside the media group, after the label.
    media.element.prepend(media.input);
    return {
      name,
      element,
      error,
      focus: () => media.input.focus(),
      // A URL comes back; a file (a data URL) was not kept.
      write: (value) => {
        if (typeof value === 'string' && !value.startsWith('data:')) media.input.value = value;
      },
      read: () => {
        const value = media.read();
        return value === undefined ? { set: false } : { set: true, value };
      },
    };
  }
  const multiline = name === 'prompt' || name === 'negative_prompt';
  const input = multiline ? h('textarea', { id, name, rows: 3 }) : h('input', { id, name, type: 'text', autocomplete: 'off' });
  if (name === 'size') input.setAttribute('placeholder', 'WIDTHxHEIGHT, e.g. 1280x720');
  input.addEventListener('input', changed);
  const { element, error } = shell(name, required, schema, input, id);
  // An empty prompt is sent as it is, so the refusal names it; other empty text fields are unset.
  return {
    name,
    element,
    error,
    focus: () => input.focus(),
    write: (value) => (input.value = String(value)),
    read: () => (input.value === '' && name !== 'prompt' ? { set: false } : { set: true, value: input.value }),
  };
}

function arrayField(name: string, schema: Schema, required: boolean, limits: FormLimits, changed: () => void): Field {
  const items = h('ol', { class: 'items' });
  const rows: { element: HTMLElement; read: () => string | undefined }[] = [];
  const max = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : Infinity;
  const addButton = h('button', { type: 'button', class: 'secondary' }, `Add ${name} item`);
  const renumber = (): void => {
    rows.forEach((row, index) => {
      const labels = row.element.querySelectorAll('label');
      const [url, file] = [labels[0], labels[1]];
      if (url) url.textContent = `${name}[${index}]`;
      if (file) file.textContent = `${name}[${index}] file`;
    });
    addButton.disabled = rows.length >= max;
  };
  const add = (): void => {
    const media = mediaInput(`${name}[${rows.length}]`, ACCEPT[name] ?? '*/*', limits, false, changed);
    const urlLabel = h('label', { for: media.input.id }, `${name}[${rows.length}]`);
    media.element.prepend(urlLabel, media.input);
    const row = { element: h('li', {}, media.element), read: media.read };
    const remove = h('button', { type: 'button', class: 'secondary' }, 'Remove');
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.element.remove();
      renumber();
      changed();
      addButton.focus();
    });
    row.element.append(remove);
    rows.push(row);
    items.append(row.element);
    renumber();
    changed();
  };
  addButton.addEventListener('click', () => {
    add();
    rows.at(-1)?.element.querySelector('input')?.focus();
  });
  if (typeof schema['minItems'] === 'number' && schema['minItems'] > 0) for (let i = 0; i < schema['minItems']; i += 1) add();
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const element = h(
    'fieldset',
    { class: 'field array', 'data-param': name },
    h('legend', {}, name),
    required ? h('span', { class: 'required' }, 'required') : null,
    items,
    addButton,
    h('small', { class: 'hint' }, constraintText(schema)),
    error,
  );
  return {
    name,
    element,
    error,
    focus: () => (rows[0]?.element.querySelector('input') ?? addButton).focus(),
    read: () => {
      if (rows.length === 0) return { set: false };
      return { set: true, value: rows.map((row) => row.read()).filter((v): v is string => v !== undefined) };
    },
  };
}

/** `extra` of the reference model: `image_options`, aligned by position with `images`. */
function extraField(schema: Schema, changed: () => void): Field {
  const options = h('ol', { class: 'items' });
  const rows: { element: HTMLElement; type: HTMLSelectElement; refName: HTMLInputElement }[] = [];
  const renumber = (): void =>
    rows.forEach((row, index) => {
      const [typeLabel, nameLabel] = [...row.element.querySelectorAll('label')];
      if (typeLabel) typeLabel.textContent = `image_options[${index}].type`;
      if (nameLabel) nameLabel.textContent = `image_options[${index}].ref_name`;
    });
  const addButton = h('button', { type: 'button', class: 'secondary' }, 'Add image_options item');
  addButton.addEventListener('click', () => {
    const typeId = uid('image-option-type');
    const nameId = uid('image-option-ref-name');
    const type = h(
      'select',
      { id: typeId },
      h('option', { value: '' }, '(not set)'),
      h('option', { value: 'subject' }, 'subject'),
      h('option', { value: 'background' }, 'background'),
    );
    const refName = h('input', { id: nameId, type: 'text', autocomplete: 'off' });
    const remove = h('button', { type: 'button', class: 'secondary' }, 'Remove');
    const row = { element: h('li', { class: 'option' }, h('label', { for: typeId }), type, h('label', { for: nameId }), refName, remove), type, refName };
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.element.remove();
      renumber();
      changed();
      addButton.focus();
    });
    type.addEventListener('change', changed);
    refName.addEventListener('input', changed);
    rows.push(row);
    options.append(row.element);
    renumber();
    type.focus();
    changed();
  });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const element = h(
    'fieldset',
    { class: 'field array', 'data-param': 'extra' },
    h('legend', {}, 'extra'),
    h('p', { class: 'hint' }, 'image_options: one per item of images, in the same order; ref_name names it in the prompt.'),
    options,
    addButton,
    h('small', { class: 'hint' }, constraintText(schema)),
    error,
  );
  return {
    name: 'extra',
    element,
    error,
    focus: () => (rows[0]?.type ?? addButton).focus(),
    read: () => {
      if (rows.length === 0) return { set: false };
      const items = rows.map((row) => ({
        ...(row.type.value !== '' ? { type: row.type.value } : {}),
        ...(row.refName.value !== '' ? { ref_name: row.refName.value } : {}),
      }));
      return { set: true, value: { image_options: items } };
    },
  };
}

export function buildForm(model: ModelInfo, limits: FormLimits): ModelForm {
  const schema = model.schema;
  const properties = (isObject(schema['properties']) ? schema['properties'] : {}) as Record<string, Schema>;
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  const listeners: (() => void)[] = [];
  const changed = (): void => listeners.forEach((listener) => listener());
  const fields: Field[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (name === 'model') continue;
    if (name === 'extra') fields.push(extraField(property, changed));
    else if (types(property).includes('array')) fields.push(arrayField(name, property, required.has(name), limits, changed));
    else fields.push(scalarField(name, property, required.has(name), limits, changed));
  }
  const element = h('div', { class: 'fields' });
  const formError = h('p', { class: 'error', role: 'alert', hidden: true });

  // Image models: size, or width and height, never both (decisions §2).
  let sizeMode: (() => boolean) | undefined;
  let chooseMode: ((bySize: boolean) => void) | undefined;
  let modeElement: HTMLElement | undefined;
  if (properties['size'] && properties['width']) {
    const byName = new Map(fields.map((f) => [f.name, f]));
    const sizeField = byName.get('size');
    const sides = [byName.get('width'), byName.get('height')].filter((f): f is Field => f !== undefined);
    const group = uid('dimensions');
    const sidesRadio = h('input', { type: 'radio', name: group, id: `${group}-sides`, value: 'sides', checked: true });
    const sizeRadio = h('input', { type: 'radio', name: group, id: `${group}-size`, value: 'size' });
    const apply = (): void => {
      const useSize = sizeRadio.checked;
      sizeField?.element.querySelectorAll('input').forEach((input) => (input.disabled = !useSize));
      for (const side of sides) side.element.querySelectorAll('input').forEach((input) => (input.disabled = useSize));
      sizeField?.element.classList.toggle('off', !useSize);
      for (const side of sides) side.element.classList.toggle('off', useSize);
      changed();
    };
    sidesRadio.addEventListener('change', apply);
    sizeRadio.addEventListener('change', apply);
    modeElement = h(
      'fieldset',
      { class: 'field mode' },
      h('legend', {}, 'Dimensions given as'),
      h('span', {}, sidesRadio, h('label', { for: `${group}-sides` }, 'width and height')),
      h('span', {}, sizeRadio, h('label', { for: `${group}-size` }, 'size (WIDTHxHEIGHT)')),
    );
    sizeMode = () => sizeRadio.checked;
    chooseMode = (bySize) => {
      sizeRadio.checked = bySize;
      sidesRadio.checked = !bySize;
      apply();
    };
    queueMicrotask(apply);
  }
  // The choice of mode stands just before the fields it switches.
  for (const field of fields) element.append(...(field.name === 'size' && modeElement ? [modeElement] : []), field.element);
  element.append(formError);

  const skipped = (name: string): boolean => (sizeMode ? (sizeMode() ? name === 'width' || name === 'height' : name === 'size') : false);
  const clearErrors = (): void => {
    for (const error of [formError, ...fields.map((f) => f.error)]) {
      error.hidden = true;
      error.textContent = '';
    }
    for (const field of fields) field.element.classList.remove('invalid');
  };
  return {
    element,
    clearErrors,
    onChange: (listener) => listeners.push(listener),
    fill: (values) => {
      for (const field of fields) if (field.name in values) field.write?.(values[field.name]);
      if ('size' in values) chooseMode?.(true);
      else if ('width' in values || 'height' in values) chooseMode?.(false);
      changed();
    },
    body: () => {
      const body: Record<string, unknown> = { model: model.id };
      for (const field of fields) {
        if (skipped(field.name)) continue;
        const read = field.read();
        if (read.set) body[field.name] = read.value;
      }
      return body;
    },
    showError: (param, message) => {
      const field = fields.find((f) => f.name === param);
      const target = field?.error ?? formError;
      target.textContent = field ? message : `${param ? `${param}: ` : ''}${message}`;
      target.hidden = false;
      if (field) {
        field.element.classList.add('invalid');
        field.focus();
      }
      return field !== undefined;
    },
  };
}
