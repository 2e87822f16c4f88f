// Actions judged as RLA_policy §7 says (the harness's rule, tests/conformance/run):
// same dtype and shape, integers equal, floats within 1e-4 absolute or relative (NaN equal to NaN).
import { decodeBase64 } from '../../src/base64.js';
import { viewElements } from '../../src/dtypes.js';

const elements = (v) => Array.from(viewElements(v.dtype, decodeBase64(v.base64)));

/** '' when `got` equals `want` (lists of inline ndarray values), else why not. */
export function sameActions(got, want) {
  if (got.length !== want.length) return `expected ${want.length} actions, got ${got.length}`;
  for (let i = 0; i < want.length; i++) {
    const [g, w] = [got[i], want[i]];
    if (g.dtype !== w.dtype || JSON.stringify(g.shape) !== JSON.stringify(w.shape))
      return `action ${i}: ${g.dtype}[${g.shape}], expected ${w.dtype}[${w.shape}]`;
    const [ge, we] = [elements(g), elements(w)];
    for (let k = 0; k < we.length; k++) {
      const [a, b] = [ge[k], we[k]];
      const ok = w.dtype.startsWith('F')
        ? a === b || (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= Math.max(1e-4, 1e-4 * Math.abs(b))
        : a === b; // NaN equals NaN
      if (!ok) return `action ${i}, element ${k}: ${a}, expected ${b}`;
    }
  }
  return '';
}
