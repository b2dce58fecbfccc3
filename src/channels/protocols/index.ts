/** Adapters by protocol name. channels-B adds minimax, pixverse, fal and replicate here. */
import type { ProtocolAdapter, ProtocolName } from '../protocol.js';
import { arkAdapter } from './ark.js';
import { dashscopeAdapter } from './dashscope.js';
import { mediagateAdapter } from './mediagate.js';

export const ADAPTERS: Partial<Record<ProtocolName, ProtocolAdapter>> = {
  mediagate: mediagateAdapter,
  dashscope: dashscopeAdapter,
  ark: arkAdapter,
};
