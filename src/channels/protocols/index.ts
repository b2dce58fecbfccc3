/** Adapters by protocol name. */
import type { ProtocolAdapter, ProtocolName } from '../protocol.js';
import { arkAdapter } from './ark.js';
import { dashscopeAdapter } from './dashscope.js';
import { falAdapter } from './fal.js';
import { geminiAdapter } from './gemini.js';
import { klingAdapter } from './kling.js';
import { lumaAdapter } from './luma.js';
import { mediagateAdapter } from './mediagate.js';
import { minimaxAdapter } from './minimax.js';
import { pixverseAdapter } from './pixverse.js';
import { replicateAdapter } from './replicate.js';
import { runwayAdapter } from './runway.js';
import { vertexAdapter } from './vertex.js';
import { xaiAdapter } from './xai.js';

export const ADAPTERS: Partial<Record<ProtocolName, ProtocolAdapter>> = {
  mediagate: mediagateAdapter,
  dashscope: dashscopeAdapter,
  ark: arkAdapter,
  minimax: minimaxAdapter,
  pixverse: pixverseAdapter,
  fal: falAdapter,
  replicate: replicateAdapter,
  gemini: geminiAdapter,
  vertex: vertexAdapter,
  kling: klingAdapter,
  runway: runwayAdapter,
  luma: lumaAdapter,
  xai: xaiAdapter,
};
