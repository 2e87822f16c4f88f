// The operation registry of the portable policy, extension RLA_policy (generated from spec/policy_ops.json by spec/policy_ops.py (make tables): do not edit).

/**
 * A term of a cost or workspace formula: k (for an activation node, 'activation': the activation's own cost or
 * workspace per element) times the product of the quantities named in `of`.
 * @typedef {{k: number | 'activation', of: string[]}} Term
 */
/**
 * A parameter of an operation, an activation function or a head.
 * @typedef {{name: string, type: string, shape?: string, required?: boolean, nullable?: boolean, least?: number,
 *   values?: string[], default?: number | string, nonzero?: boolean}} Parameter
 */
/**
 * An operation: its input ranks (least, most or null), its inputs (a number, or '1 or more'), its outputs,
 * parameters, cost and workspace.
 * @typedef {{input_rank: (number | null)[], inputs: number | string, outputs: number, parameters: Parameter[],
 *   input: string, output: string, cost: Term[], workspace: Term[], workspace_means: string}} Operation
 */
/**
 * An activation function: its parameters, formula, cost and workspace per element, values at NaN and infinities.
 * @typedef {{parameters: Parameter[], formula: string, constants?: Record<string, number>, ordered?: string[],
 *   cost: number, workspace: number, nan: string, pos_inf: string, neg_inf: string}} Activation
 */
/**
 * A head: its parameters, the action space kinds it acts in, its width, cost and workspace.
 * @typedef {{parameters: Parameter[], spaces: string[], width: string, cost: Term[], workspace: Term[]}} Head
 */

/**
 * @template T
 * @param {T} v
 * @returns {T}
 */
const deepFreeze = (v) => {
  if (v !== null && typeof v === 'object') {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};

// The policy limits (RLA_policy §5.11).
export const MAX_POLICY_VALUE_ELEMENTS = 16777216;
export const MAX_POLICY_OPERATIONS = 4294967296;
export const POLICY_NODE_COST = 65536;
export const MAX_POLICY_MEMORY_BYTES = 1073741824;
export const POLICY_BLOCK_ELEMENTS = 1048576;

// Constants of the heads (RLA_policy §6).
/** what the logit of an action masked out becomes before the argmax of an argmax or multi_argmax head (as MaskablePPO does, §6) */
export const MASKED_LOGIT = -100000000.0;
/** 3·2^−25: the bernoulli head gives 1.0 where the float32 logit is above it (SB3's float32 round(sigmoid(x)), §6) */
export const BERNOULLI_THRESHOLD = 8.940696716308594e-08;

/**
 * Quantities the cost and workspace formulas name (RLA_policy §5.11).
 * @type {readonly string[]}
 */
export const QUANTITIES = deepFreeze(["out", "outs", "in", "width", "weights", "kernel", "padded", "block", "gates", "state"]);

/**
 * Operations (RLA_policy §5): parameters, inputs, outputs, cost and workspace formulas.
 * @type {Readonly<Record<string, Operation>>}
 */
export const OPERATIONS = deepFreeze({
  "linear": {
    "input_rank": [
      1,
      null
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "weight",
        "type": "ndarray",
        "shape": "[O, I]",
        "required": true
      },
      {
        "name": "bias",
        "type": "ndarray",
        "shape": "[O]",
        "required": true,
        "nullable": true
      }
    ],
    "input": "[..., I]",
    "output": "[..., O]",
    "cost": [
      {
        "k": 1,
        "of": [
          "out",
          "width"
        ]
      },
      {
        "k": 1,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [
      {
        "k": 8,
        "of": [
          "in"
        ]
      },
      {
        "k": 8,
        "of": [
          "weights"
        ]
      },
      {
        "k": 16,
        "of": [
          "out"
        ]
      }
    ],
    "workspace_means": "binary64 copies of the input and the weights, the binary64 sums and the bias added to them"
  },
  "conv2d": {
    "input_rank": [
      3,
      3
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "weight",
        "type": "ndarray",
        "shape": "[O, C, kh, kw]",
        "required": true
      },
      {
        "name": "bias",
        "type": "ndarray",
        "shape": "[O]",
        "required": true,
        "nullable": true
      },
      {
        "name": "stride",
        "type": "int_pair",
        "least": 1,
        "required": true
      },
      {
        "name": "padding",
        "type": "int_pair",
        "least": 0,
        "required": true
      }
    ],
    "input": "[C, H, W]",
    "output": "[O, H', W']",
    "cost": [
      {
        "k": 1,
        "of": [
          "out",
          "kernel"
        ]
      },
      {
        "k": 1,
        "of": [
          "out"
        ]
      },
      {
        "k": 1,
        "of": [
          "padded"
        ]
      }
    ],
    "workspace": [
      {
        "k": 8,
        "of": [
          "padded"
        ]
      },
      {
        "k": 8,
        "of": [
          "weights"
        ]
      },
      {
        "k": 8,
        "of": [
          "block"
        ]
      },
      {
        "k": 16,
        "of": [
          "out"
        ]
      }
    ],
    "workspace_means": "the binary64 zero-padded input, binary64 weights, one block of binary64 columns (at most POLICY_BLOCK_ELEMENTS unless one output position needs more), the binary64 sums"
  },
  "flatten": {
    "input_rank": [
      0,
      null
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [],
    "input": "any",
    "output": "[product of the shape]",
    "cost": [
      {
        "k": 1,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [],
    "workspace_means": "none"
  },
  "concat": {
    "input_rank": [
      0,
      null
    ],
    "inputs": "1 or more",
    "outputs": 1,
    "parameters": [],
    "input": "any (each)",
    "output": "[sum of the products]",
    "cost": [
      {
        "k": 1,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [],
    "workspace_means": "none"
  },
  "activation": {
    "input_rank": [
      0,
      null
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "fn",
        "type": "activation",
        "required": true
      }
    ],
    "input": "any",
    "output": "the input's",
    "cost": [
      {
        "k": "activation",
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [
      {
        "k": "activation",
        "of": [
          "out"
        ]
      }
    ],
    "workspace_means": "the activation's bytes per element (binary64 temporaries)"
  },
  "prelu": {
    "input_rank": [
      1,
      null
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "weight",
        "type": "ndarray",
        "shape": "[1] or [C]",
        "required": true
      }
    ],
    "input": "[C, ...]",
    "output": "the input's",
    "cost": [
      {
        "k": 2,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [
      {
        "k": 16,
        "of": [
          "out"
        ]
      },
      {
        "k": 8,
        "of": [
          "weights"
        ]
      }
    ],
    "workspace_means": "the slope of every element and the products"
  },
  "layer_norm": {
    "input_rank": [
      1,
      null
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "weight",
        "type": "ndarray",
        "shape": "[N]",
        "required": true,
        "nullable": true
      },
      {
        "name": "bias",
        "type": "ndarray",
        "shape": "[N]",
        "required": true,
        "nullable": true
      },
      {
        "name": "eps",
        "type": "float",
        "required": true
      }
    ],
    "input": "[..., N]",
    "output": "the input's",
    "cost": [
      {
        "k": 8,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [
      {
        "k": 32,
        "of": [
          "out"
        ]
      },
      {
        "k": 8,
        "of": [
          "weights"
        ]
      }
    ],
    "workspace_means": "binary64 copies of the input, the centred values and the result"
  },
  "batch_norm": {
    "input_rank": [
      1,
      1
    ],
    "inputs": 1,
    "outputs": 1,
    "parameters": [
      {
        "name": "running_mean",
        "type": "ndarray",
        "shape": "[N]",
        "required": true
      },
      {
        "name": "running_var",
        "type": "ndarray",
        "shape": "[N]",
        "required": true
      },
      {
        "name": "weight",
        "type": "ndarray",
        "shape": "[N]",
        "required": true,
        "nullable": true
      },
      {
        "name": "bias",
        "type": "ndarray",
        "shape": "[N]",
        "required": true,
        "nullable": true
      },
      {
        "name": "eps",
        "type": "float",
        "required": true
      }
    ],
    "input": "[N]",
    "output": "[N]",
    "cost": [
      {
        "k": 6,
        "of": [
          "out"
        ]
      }
    ],
    "workspace": [
      {
        "k": 32,
        "of": [
          "out"
        ]
      },
      {
        "k": 8,
        "of": [
          "weights"
        ]
      }
    ],
    "workspace_means": "binary64 copies of the input, the centred values and the result"
  },
  "lstm": {
    "input_rank": [
      1,
      1
    ],
    "inputs": 3,
    "outputs": 3,
    "parameters": [
      {
        "name": "layers",
        "type": "lstm_layers",
        "required": true
      }
    ],
    "input": "[in], state, state",
    "output": "[H], state, state",
    "cost": [
      {
        "k": 1,
        "of": [
          "weights"
        ]
      },
      {
        "k": 32,
        "of": [
          "state"
        ]
      }
    ],
    "workspace": [
      {
        "k": 8,
        "of": [
          "weights"
        ]
      },
      {
        "k": 64,
        "of": [
          "gates"
        ]
      },
      {
        "k": 16,
        "of": [
          "state"
        ]
      }
    ],
    "workspace_means": "binary64 weights, the binary64 gates of one layer and their activations, the layers' new states before they are stacked"
  }
});

/**
 * Activation functions (RLA_policy §5.5): parameters, formula, cost and workspace per element, values at NaN and infinities.
 * @type {Readonly<Record<string, Activation>>}
 */
export const ACTIVATIONS = deepFreeze({
  "identity": {
    "parameters": [],
    "formula": "x",
    "cost": 1,
    "workspace": 0,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "−inf"
  },
  "relu": {
    "parameters": [],
    "formula": "max(x, 0)",
    "cost": 1,
    "workspace": 8,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "0"
  },
  "tanh": {
    "parameters": [],
    "formula": "tanh(x)",
    "cost": 8,
    "workspace": 24,
    "nan": "NaN",
    "pos_inf": "1",
    "neg_inf": "−1"
  },
  "sigmoid": {
    "parameters": [],
    "formula": "1/(1 + e^−x)",
    "cost": 8,
    "workspace": 24,
    "nan": "NaN",
    "pos_inf": "1",
    "neg_inf": "0"
  },
  "elu": {
    "parameters": [
      {
        "name": "alpha",
        "type": "float",
        "default": 1.0
      }
    ],
    "formula": "x if x > 0 else alpha·(e^x − 1)",
    "cost": 8,
    "workspace": 40,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "−alpha"
  },
  "leaky_relu": {
    "parameters": [
      {
        "name": "negative_slope",
        "type": "float",
        "default": 0.01
      }
    ],
    "formula": "x if x ≥ 0 else negative_slope·x",
    "cost": 2,
    "workspace": 16,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "−inf (NaN when negative_slope is 0)"
  },
  "silu": {
    "parameters": [],
    "formula": "x·sigmoid(x)",
    "cost": 12,
    "workspace": 40,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "NaN (−inf·0)"
  },
  "gelu": {
    "parameters": [
      {
        "name": "approximate",
        "type": "enum",
        "values": [
          "none",
          "tanh"
        ],
        "default": "none"
      }
    ],
    "formula": "\"none\": x·Φ(x) = 0.5·x·(1 + erf(x/√2)); \"tanh\": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
    "cost": 32,
    "workspace": 64,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "NaN (−inf·0)"
  },
  "softplus": {
    "parameters": [
      {
        "name": "beta",
        "type": "float",
        "default": 1.0,
        "nonzero": true
      },
      {
        "name": "threshold",
        "type": "float",
        "default": 20.0
      }
    ],
    "formula": "with z = beta·x: x if z > threshold else (max(z, 0) + log1p(e^−|z|))/beta",
    "cost": 16,
    "workspace": 48,
    "nan": "NaN",
    "pos_inf": "+inf (beta > 0)",
    "neg_inf": "0 (beta > 0)"
  },
  "hardtanh": {
    "parameters": [
      {
        "name": "min_val",
        "type": "float",
        "default": -1.0
      },
      {
        "name": "max_val",
        "type": "float",
        "default": 1.0
      }
    ],
    "formula": "min(max(x, min_val), max_val), min_val ≤ max_val (PyTorch's ReLU6 is hardtanh(0, 6))",
    "ordered": [
      "min_val",
      "max_val"
    ],
    "cost": 2,
    "workspace": 16,
    "nan": "NaN",
    "pos_inf": "max_val",
    "neg_inf": "min_val"
  },
  "selu": {
    "parameters": [],
    "formula": "s·(x if x > 0 else a·(e^x − 1)), a = 1.6732632423543772848170429916717, s = 1.0507009873554804934193349852946",
    "constants": {
      "a": 1.6732632423543772,
      "s": 1.0507009873554805
    },
    "cost": 8,
    "workspace": 40,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "−s·a"
  },
  "celu": {
    "parameters": [
      {
        "name": "alpha",
        "type": "float",
        "default": 1.0,
        "nonzero": true
      }
    ],
    "formula": "x if x > 0 else alpha·(e^(x/alpha) − 1)",
    "cost": 8,
    "workspace": 40,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "−alpha (alpha > 0)"
  },
  "mish": {
    "parameters": [],
    "formula": "x·tanh(softplus(x)), softplus with beta 1, threshold 20",
    "cost": 32,
    "workspace": 64,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "NaN (−inf·0)"
  },
  "hardswish": {
    "parameters": [],
    "formula": "x·min(max(x + 3, 0), 6)/6",
    "cost": 4,
    "workspace": 32,
    "nan": "NaN",
    "pos_inf": "+inf",
    "neg_inf": "NaN (−inf·0)"
  },
  "hardsigmoid": {
    "parameters": [],
    "formula": "min(max(x + 3, 0), 6)/6",
    "cost": 4,
    "workspace": 32,
    "nan": "NaN",
    "pos_inf": "1",
    "neg_inf": "0"
  },
  "softsign": {
    "parameters": [],
    "formula": "x/(1 + |x|)",
    "cost": 4,
    "workspace": 32,
    "nan": "NaN",
    "pos_inf": "NaN (inf/inf)",
    "neg_inf": "NaN (inf/inf)"
  }
});

/**
 * Activation function -> {parameter: default}.
 * @type {Readonly<Record<string, Readonly<Record<string, number | string>>>>}
 */
export const ACTIVATION_DEFAULTS = deepFreeze({
  "identity": {},
  "relu": {},
  "tanh": {},
  "sigmoid": {},
  "elu": {
    "alpha": 1.0
  },
  "leaky_relu": {
    "negative_slope": 0.01
  },
  "silu": {},
  "gelu": {
    "approximate": "none"
  },
  "softplus": {
    "beta": 1.0,
    "threshold": 20.0
  },
  "hardtanh": {
    "min_val": -1.0,
    "max_val": 1.0
  },
  "selu": {},
  "celu": {
    "alpha": 1.0
  },
  "mish": {},
  "hardswish": {},
  "hardsigmoid": {},
  "softsign": {}
});

/**
 * Heads (RLA_policy §6): parameters, action space kinds, cost and workspace formulas.
 * @type {Readonly<Record<string, Head>>}
 */
export const HEADS = deepFreeze({
  "argmax": {
    "parameters": [],
    "spaces": [
      "discrete"
    ],
    "width": "n",
    "cost": [
      {
        "k": 1,
        "of": [
          "in"
        ]
      }
    ],
    "workspace": [
      {
        "k": 8,
        "of": [
          "in"
        ]
      }
    ]
  },
  "quantile_argmax": {
    "parameters": [
      {
        "name": "n_quantiles",
        "type": "int",
        "least": 1
      }
    ],
    "spaces": [
      "discrete"
    ],
    "width": "n_quantiles · n",
    "cost": [
      {
        "k": 2,
        "of": [
          "in"
        ]
      }
    ],
    "workspace": [
      {
        "k": 16,
        "of": [
          "in"
        ]
      }
    ]
  },
  "multi_argmax": {
    "parameters": [
      {
        "name": "sizes",
        "type": "int_list"
      }
    ],
    "spaces": [
      "multi_discrete",
      "multi_binary"
    ],
    "width": "sum of sizes",
    "cost": [
      {
        "k": 1,
        "of": [
          "in"
        ]
      }
    ],
    "workspace": [
      {
        "k": 8,
        "of": [
          "in"
        ]
      }
    ]
  },
  "bernoulli": {
    "parameters": [],
    "spaces": [
      "multi_binary"
    ],
    "width": "n (the product, when n is an array)",
    "cost": [
      {
        "k": 8,
        "of": [
          "in"
        ]
      }
    ],
    "workspace": [
      {
        "k": 16,
        "of": [
          "in"
        ]
      }
    ]
  },
  "box": {
    "parameters": [
      {
        "name": "squash",
        "type": "enum",
        "values": [
          "clip",
          "tanh",
          "rescale"
        ]
      }
    ],
    "spaces": [
      "box"
    ],
    "width": "product of the space's shape",
    "cost": [
      {
        "k": 8,
        "of": [
          "in"
        ]
      }
    ],
    "workspace": [
      {
        "k": 48,
        "of": [
          "in"
        ]
      }
    ]
  }
});

/**
 * `functions` (name -> implementation), checked to implement exactly the names of `table` (OPERATIONS,
 * ACTIVATIONS or HEADS): the registry is the one source of the names, so a table of implementations that
 * lacks one of them, or has one the registry does not, throws when its module loads, before anything runs.
 * @template T
 * @param {Record<string, unknown>} table
 * @param {Record<string, T>} functions
 * @param {string} what
 * @returns {Readonly<Record<string, T>>}
 */
export function implementations(table, functions, what) {
  const missing = Object.keys(table).filter((k) => !Object.hasOwn(functions, k)).sort();
  const extra = Object.keys(functions).filter((k) => !Object.hasOwn(table, k)).sort();
  if (missing.length || extra.length) throw new Error(`the ${what} differ from the registry: ${JSON.stringify(missing)} lack an implementation, ${JSON.stringify(extra)} are not in it`);
  return Object.freeze({ ...functions });
}
