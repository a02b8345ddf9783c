import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what its last full collection left alive. Left to itself V8 grows it
 * up to 4x for a small heap; under load the service's old generation is mostly request objects that outlived a young
 * collection or two, so it filled ~45 MiB with garbage before collecting (the resident set peaked at 121-131 MiB).
 * At 30 % it peaks near 100 MiB (docs/performance.md, "Memory").
 */
const HEAP_GROWING_PERCENT = 30;

/**
 * Caps the old generation's growth. Not a NODE_OPTIONS flag, so the service sets it itself, before it allocates
 * anything that lasts and before the bundle is compiled: V8 accepts a code cache only under the flags it was made
 * with (serve-launch.ts).
 */
export function limitOldGenerationGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
