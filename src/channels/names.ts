/** The protocols a channel can speak (a leaf module: protocol.ts and profiles.ts both name them). */
export type ProtocolName =
  'sandbox' | 'mediagate' | 'dashscope' | 'ark' | 'minimax' | 'pixverse' | 'fal' | 'replicate' | 'gemini' | 'vertex' | 'kling' | 'runway' | 'luma' | 'xai';
