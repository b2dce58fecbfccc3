import { describePrice, pricingView, type Pricing } from '../../billing/index.js';
import { imageRequestSchema, videoRequestSchema, type ModelRow } from '../../catalog/index.js';
import { description, displayName } from '../../catalog/names.js';

/**
 * What the API reference says of each model beyond its schema: a request that works as it
 * stands (the create operations' per-model examples, which "try it" sends), and a paragraph with
 * the model's price and its link into the console (the description of its request schema).
 */

/**
 * A 64x64 PNG as a data URL: media inputs that work offline (an https:// URL would need the
 * network, and the sandbox engine renders from any decodable image).
 */
export const EXAMPLE_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAn0lEQVRoge2SQQkAQRDDqq+WzmQkrYh7hIFCBKSh6cdpoht0A9ArdhfiLtENugHoFbsLcZfoBt0A9IrdhbhLdINuAHrF7kLcJbpBNwC9Ynch7hLdoBuAXrG7EHeJbtANQK/YXYi7RDfoBqBX7C7EXaIbdAPQK3YX4i7RDboB6BW7C3GX6AbdAPSK3YW4S3SDbgB6xe5C3CW6QTcAveIfHpnLUXgO9etUAAAAAElFTkSuQmCC';

export const EXAMPLE_PROMPT = 'a red fox running through snow';

/** The model's request schema as the server validates it (from its catalog row). */
const schemaOf = (row: ModelRow) => (row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row));

/** A request body for `row` that is accepted as it stands: every required field, media inline. */
export function requestExample(row: ModelRow): Record<string, unknown> {
  const body: Record<string, unknown> = { model: row.id, prompt: EXAMPLE_PROMPT };
  for (const name of (schemaOf(row)['required'] as string[]).filter((n) => n !== 'model' && n !== 'prompt')) {
    if (name === 'images') body[name] = [EXAMPLE_PNG];
    else if (name === 'aspect_ratio') body[name] = '16:9';
    else body[name] = EXAMPLE_PNG;
  }
  // Seed rule 1: this model needs one reference in some array, none of which is required.
  if (row.kind === 'video' && row.atLeastOneOf && body['images'] === undefined) body['images'] = [EXAMPLE_PNG];
  if (row.kind === 'video') body['duration'] = row.duration ? Math.max(row.duration.min, Math.min(4, row.duration.max)) : 4;
  return body;
}

/** The Markdown paragraph under the model's request schema: its name, what it does, its price, the console. */
export function modelNote(row: ModelRow, pricing: Pricing | undefined): string {
  const price = pricingView(pricing, row.id);
  // The reference reads like the console's model card: the model's name, then its paragraph.
  const parts = [`**${displayName(row)}.** ${description(row)}`];
  if (price !== undefined) parts.push(`Price: ${describePrice(price)}.`);
  parts.push(`[Try it in the console](/console#model=${encodeURIComponent(row.id)}).`);
  return parts.join(' ');
}
