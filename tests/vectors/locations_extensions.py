"""Where each vector of the extensions this specification defines breaks its check: their members,
their documents and their limits."""

from __future__ import annotations

from sites import POLICY, REPLAY_BUFFER, TRAINING, VEC_NORMALIZE, in_doc, issue

SITES = {
    # extension-members: the member at fault alone: the absent member, or another member under the extension's folder
    "vec-normalize-member-absent": issue("extension-members", member=VEC_NORMALIZE),
    "vec-normalize-extra-member": issue("extension-members", member="extensions/RLA_vec_normalize/notes.txt"),
    "policy-member-absent": issue("extension-members", member=POLICY),
    "training-member-absent": issue("extension-members", member=TRAINING),
    "training-extra-member": issue("extension-members", member="extensions/RLA_training/notes.txt"),
    "replay-buffer-member-absent": issue("extension-members", member=REPLAY_BUFFER),
    "replay-buffer-extra-member": issue("extension-members", member="extensions/RLA_replay_buffer/notes.txt"),
    # extension-document: by the document principles
    "vec-normalize-top-level-key": in_doc("extension-document", VEC_NORMALIZE, "/more", "value"),
    "vec-normalize-key-missing": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize", "value"),
    "vec-normalize-key-unknown": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/shift", "value"),
    "vec-normalize-flag-not-bool": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/norm_obs", "value"),
    "vec-normalize-float-is-string": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/clip_obs", "value"),
    "vec-normalize-mean-not-f64": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs/mean", "value"),
    "vec-normalize-mean-var-shapes": in_doc(
        "extension-document", VEC_NORMALIZE, "/vec_normalize/obs/var", "contradiction"
    ),
    "vec-normalize-stats-extra-key": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs/std", "value"),
    "vec-normalize-ret-not-scalar": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/ret/mean", "value"),
    "vec-normalize-obs-null-but-normalised": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs", "value"),
    "vec-normalize-box-shape": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs/mean", "value"),
    "vec-normalize-keys-order": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs", "value"),
    "vec-normalize-key-not-in-space": in_doc("extension-document", VEC_NORMALIZE, "/vec_normalize/obs_keys/1", "value"),
    "vec-normalize-dict-space-one-stats": in_doc(
        "extension-document", VEC_NORMALIZE, "/vec_normalize/obs_keys", "contradiction"
    ),
    "vec-normalize-keys-for-box": in_doc(
        "extension-document", VEC_NORMALIZE, "/vec_normalize/obs_keys", "contradiction"
    ),
    "policy-top-level-key": in_doc("extension-document", POLICY, "/version", "not-allowed"),
    "policy-key-unknown": in_doc("extension-document", POLICY, "/policy/device", "not-allowed"),
    "policy-key-missing": in_doc("extension-document", POLICY, "/policy", "missing"),
    "policy-normalize-images-not-bool": in_doc("extension-document", POLICY, "/policy/normalize_images", "value"),
    "policy-vec-normalize-without-statistics": in_doc("extension-document", POLICY, "/policy/vec_normalize", "value"),
    "policy-observation-space-tuple": in_doc("extension-document", POLICY, "/policy/observation_space/kind", "value"),
    "policy-op-unknown": in_doc("extension-document", POLICY, "/policy/nodes/1/op", "value"),
    "policy-parameter-missing": in_doc("extension-document", POLICY, "/policy/nodes/2", "missing"),
    "policy-parameter-extra": in_doc("extension-document", POLICY, "/policy/nodes/0/stride", "not-allowed"),
    "policy-input-not-computed": in_doc("extension-document", POLICY, "/policy/nodes/1/in/0", "element"),
    "policy-output-twice": in_doc("extension-document", POLICY, "/policy/nodes/1/out", "later"),
    "policy-weight-not-f32": in_doc("extension-document", POLICY, "/policy/nodes/2/weight", "value"),
    "policy-linear-width": in_doc("extension-document", POLICY, "/policy/nodes/2/weight", "contradiction"),
    "policy-bias-size": in_doc("extension-document", POLICY, "/policy/nodes/0/bias", "contradiction"),
    "policy-conv2d-on-vector": in_doc("extension-document", POLICY, "/policy/nodes/0/in/0", "element"),
    "policy-activation-unknown": in_doc("extension-document", POLICY, "/policy/nodes/1/fn", "value"),
    "policy-activation-parameter": in_doc("extension-document", POLICY, "/policy/nodes/1/alpha", "not-allowed"),
    "policy-layer-norm-size": in_doc("extension-document", POLICY, "/policy/nodes/1/weight", "contradiction"),
    "policy-lstm-without-recurrent": in_doc("extension-document", POLICY, "/policy/nodes/0", "value"),
    "policy-recurrent-without-lstm": in_doc("extension-document", POLICY, "/policy/nodes", "contradiction"),
    "policy-lstm-weight-shape": in_doc(
        "extension-document", POLICY, "/policy/nodes/0/layers/0/weight_ih", "contradiction"
    ),
    "policy-state-read-by-linear": in_doc("extension-document", POLICY, "/policy/nodes/1/in/0", "element"),
    "policy-head-unknown": in_doc("extension-document", POLICY, "/policy/action/op", "value"),
    "policy-head-space-kind": in_doc("extension-document", POLICY, "/policy/action", "contradiction"),
    "policy-head-width": in_doc("extension-document", POLICY, "/policy/action/in", "contradiction"),
    "policy-multi-argmax-sizes": in_doc("extension-document", POLICY, "/policy/action/sizes", "contradiction"),
    "policy-box-squash": in_doc("extension-document", POLICY, "/policy/action/squash", "value"),
    "policy-observation-box-bf16": in_doc("extension-document", POLICY, "/policy/observation_space/dtype", "value"),
    "policy-box-head-f16": in_doc("extension-document", POLICY, "/policy/action", "contradiction"),
    "policy-vec-normalize-other-space": in_doc("extension-document", POLICY, "/policy/vec_normalize", "contradiction"),
    "training-key-missing": in_doc("extension-document", TRAINING, "/training", "missing"),
    "training-key-unknown": in_doc("extension-document", TRAINING, "/training/seed", "value"),
    "training-counters-key-missing": in_doc("extension-document", TRAINING, "/training/counters", "value"),
    "training-counter-negative": in_doc("extension-document", TRAINING, "/training/counters/num_timesteps", "value"),
    "training-counter-float": in_doc("extension-document", TRAINING, "/training/counters/n_updates", "value"),
    "training-progress-not-float": in_doc("extension-document", TRAINING, "/training/progress_remaining", "value"),
    "training-exploration-rate-bool": in_doc("extension-document", TRAINING, "/training/exploration_rate", "value"),
    "training-episode-starts-not-bool": in_doc(
        "extension-document", TRAINING, "/training/last_episode_starts", "value"
    ),
    "training-obs-environments": in_doc("extension-document", TRAINING, "/training/last_episode_starts", "value"),
    "training-obs-map-for-box": in_doc("extension-document", TRAINING, "/training/last_obs", "value"),
    "training-obs-scalar": in_doc("extension-document", TRAINING, "/training/last_obs", "value"),
    "training-window-maxlen-zero": in_doc("extension-document", TRAINING, "/training/episode_info/maxlen", "value"),
    "training-window-over-maxlen": in_doc("extension-document", TRAINING, "/training/episode_success/items", "value"),
    "training-window-info-not-map": in_doc("extension-document", TRAINING, "/training/episode_info/items/1", "value"),
    "training-window-success-not-bool": in_doc(
        "extension-document", TRAINING, "/training/episode_success/items/0", "value"
    ),
    "training-noise-kind-unknown": in_doc("extension-document", TRAINING, "/training/action_noise/kind", "value"),
    "training-noise-key-unknown": in_doc("extension-document", TRAINING, "/training/action_noise/theta", "value"),
    "training-noise-sigma-shape": in_doc("extension-document", TRAINING, "/training/action_noise/sigma", "value"),
    "training-noise-dtype": in_doc("extension-document", TRAINING, "/training/action_noise/dtype", "value"),
    "training-noise-vectorized-nested": in_doc(
        "extension-document", TRAINING, "/training/action_noise/base/kind", "value"
    ),
    "training-noise-vectorized-empty": in_doc("extension-document", TRAINING, "/training/action_noise/noises", "value"),
    "training-lstm-shapes": in_doc("extension-document", TRAINING, "/training/lstm_states/vf/1", "element"),
    "training-lstm-not-pair": in_doc("extension-document", TRAINING, "/training/lstm_states/pi", "value"),
    "training-torch-not-u8": in_doc("extension-document", TRAINING, "/training/random/torch", "value"),
    "training-cuda-not-list": in_doc("extension-document", TRAINING, "/training/random/torch_cuda", "value"),
    "training-numpy-key-shape": in_doc("extension-document", TRAINING, "/training/random/numpy/key", "value"),
    "training-numpy-pos-range": in_doc("extension-document", TRAINING, "/training/random/numpy/pos", "value"),
    "training-numpy-has-gauss-int": in_doc("extension-document", TRAINING, "/training/random/numpy/has_gauss", "value"),
    "training-python-version": in_doc("extension-document", TRAINING, "/training/random/python/version", "value"),
    "training-python-state-shape": in_doc("extension-document", TRAINING, "/training/random/python/state", "value"),
    "training-generator-unknown": in_doc(
        "extension-document", TRAINING, "/training/random/action_space/generator/bit_generator", "value"
    ),
    "training-generator-state-range": in_doc(
        "extension-document", TRAINING, "/training/random/action_space/generator/state", "value"
    ),
    "training-generator-has-uint32": in_doc(
        "extension-document", TRAINING, "/training/random/action_space/generator/has_uint32", "value"
    ),
    "training-subspace-null": in_doc(
        "extension-document", TRAINING, "/training/random/observation_space/spaces/0", "value"
    ),
    "training-obs-dict-keys": in_doc("extension-document", TRAINING, "/training/last_obs", "value"),
    "training-obs-array-for-dict": in_doc("extension-document", TRAINING, "/training/last_obs", "value"),
    "training-top-level-key": in_doc("extension-document", TRAINING, "/more", "value"),
    "replay-buffer-key-missing": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer", "missing"),
    "replay-buffer-key-unknown": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/size", "value"),
    "replay-buffer-class-unknown": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/class", "value"),
    "replay-buffer-size-zero": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/buffer_size", "value"),
    "replay-buffer-n-envs-float": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/n_envs", "value"),
    "replay-buffer-pos-negative": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/pos", "value"),
    "replay-buffer-full-not-bool": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/full", "value"),
    "replay-buffer-space-not-space": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/action_space", "value"
    ),
    "replay-buffer-observations-list": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observations", "value"
    ),
    "replay-buffer-rewards-not-ndarray": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/rewards", "value"),
    "replay-buffer-her-key-missing": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/her", "missing"),
    "replay-buffer-her-strategy": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/goal_selection_strategy", "value"
    ),
    "replay-buffer-her-infos-not-lists": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/infos/0", "value"
    ),
    "replay-buffer-n-steps-zero": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/n_step/n_steps", "value"),
    "replay-buffer-gamma-string": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/n_step/gamma", "value"),
    "replay-buffer-her-for-plain": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/her", "value"),
    "replay-buffer-n-step-missing": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/n_step", "value"),
    "replay-buffer-dict-class-box-space": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observation_space", "value"
    ),
    "replay-buffer-observations-map-for-box": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observations", "value"
    ),
    "replay-buffer-optimize-dict": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/optimize_memory_usage", "value"
    ),
    "replay-buffer-optimize-and-timeouts": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/handle_timeout_termination", "contradiction"
    ),
    "replay-buffer-next-observations-null": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/next_observations", "value"
    ),
    "replay-buffer-her-without-goals": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observation_space", "value"
    ),
    "replay-buffer-her-infos-without-copy": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/infos", "value"
    ),
    "replay-buffer-space-tuple": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observation_space/kind", "value"
    ),
    "replay-buffer-action-multi-binary-array": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/action_space/n", "value"
    ),
    "replay-buffer-observations-shape": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observations", "contradiction"
    ),
    "replay-buffer-dict-keys-order": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observations", "value"
    ),
    "replay-buffer-actions-dim": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/actions", "contradiction"),
    "replay-buffer-rewards-shape": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/rewards", "value"),
    "replay-buffer-her-ep-start-shape": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/ep_start", "value"
    ),
    "replay-buffer-her-infos-rows": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/her/infos", "value"),
    "replay-buffer-pos-out-of-range": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/pos", "value"),
    "replay-buffer-observations-dtype": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observations", "value"
    ),
    "replay-buffer-actions-f64": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/actions", "value"),
    "replay-buffer-dones-bool": in_doc("extension-document", REPLAY_BUFFER, "/replay_buffer/dones", "value"),
    "replay-buffer-her-ep-length-dtype": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/ep_length", "value"
    ),
    "replay-buffer-space-differs": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/observation_space", "value"
    ),
    "replay-buffer-her-ep-start-range": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/ep_start", "value"
    ),
    "replay-buffer-her-ep-length-range": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/ep_length", "value"
    ),
    "replay-buffer-her-current-ep-start-range": in_doc(
        "extension-document", REPLAY_BUFFER, "/replay_buffer/her/current_ep_start", "value"
    ),
    "replay-buffer-top-level-key": in_doc("extension-document", REPLAY_BUFFER, "/more", "value"),
    "policy-prelu-weight-shape": in_doc("extension-document", POLICY, "/policy/nodes/1/weight", "contradiction"),
    "policy-softplus-beta-zero": in_doc("extension-document", POLICY, "/policy/nodes/1/beta", "value"),
    "policy-celu-alpha-zero": in_doc("extension-document", POLICY, "/policy/nodes/1/alpha", "value"),
    "policy-hardtanh-min-above-max": in_doc("extension-document", POLICY, "/policy/nodes/1/min_val", "contradiction"),
    "policy-parameter-not-finite": in_doc("extension-document", POLICY, "/policy/nodes/1/alpha", "value"),
    "policy-parameter-beyond-float32": in_doc("extension-document", POLICY, "/policy/nodes/1/negative_slope", "value"),
    "policy-eps-not-finite": in_doc("extension-document", POLICY, "/policy/nodes/1/eps", "value"),
    # extension-limit: the first item beyond a count limit, or the value passing a limit
    "policy-value-too-large": in_doc("extension-limit", POLICY, "/policy/observation_space/n", "limit"),
    "policy-operations-too-many": in_doc("extension-limit", POLICY, "/policy/nodes/255", "limit"),
    "policy-zero-width-linear-chain": in_doc("extension-limit", POLICY, "/policy/nodes/255", "limit"),
    "policy-node-cost": in_doc("extension-limit", POLICY, "/policy/nodes/65535", "limit"),
    "policy-conv2d-padding-huge": in_doc("extension-limit", POLICY, "/policy/nodes/0", "limit"),
    "policy-memory-too-much": in_doc("extension-limit", POLICY, "/policy/nodes/13", "limit"),
    "policy-recurrent-state-too-large": in_doc("extension-limit", POLICY, "/policy/recurrent/hidden_size", "limit"),
}
