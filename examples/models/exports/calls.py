"""How each exported model is called: the functions, in order, and their seeded
inputs, as the export scripts beside this file check them against their framework.
A stateful model's calls run in order on one loaded program (its globals persist).
Read by examples/run_models.py and tests/test_models.py."""

from __future__ import annotations

import numpy as np


def normal(shape, seed: int, shift: float = 0.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) + shift).astype(np.float32)


def token_ids(shape, vocabulary: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, vocabulary, shape).astype(np.int32)


def graph_edges(edges: int, nodes: int, seed: int) -> list[np.ndarray]:
    """[src, dst]: seeded int32 node ids of `edges` edges, as jax_gnn.py draws them."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, nodes, edges).astype(np.int32) for _ in range(2)]


def padding_mask(shape, padded: int) -> np.ndarray:
    """1 for a token, 0 for padding: the last sequence's last `padded` positions."""
    mask = np.ones(shape, np.int32)
    mask[-1, shape[1] - padded:] = 0
    return mask


# model (its .mlir's stem) -> [(function, [inputs])]
CALLS = {
    "torch_mlp": [("main", [normal((8, 64), 0)])],
    "torch_attention": [("main", [normal((1, 16, 64), 0)])],
    "jax_mlp": [("main", [normal((8, 64), 0)])],
    "jax_attention": [("main", [normal((1, 16, 64), 0)])],
    "torch_mlp_dynamic": [("main", [normal((b, 64), i)]) for i, b in enumerate((8, 5, 33, 8))],
    "torch_stateful": [("step", [normal((8, 64), i)]) for i in range(3)] + [("read", [])],
    "torch_resnet": [("main", [normal((1, 3, 16, 16), 0)])],
    "torch_mobilenetv2": [("main", [normal((1, 3, 32, 32), 0)])],
    "torch_bert": [("main", [token_ids((1, 16), 100, 0).astype(np.int64), padding_mask((1, 16), 4).astype(np.int64)])],
    "torch_lstm": [("main", [normal((2, 8, 16), 0)])],
    "torch_mixer": [("main", [normal((1, 3, 32, 32), 0)])],
    "jax_control_flow": [("main", [normal((8, 64), i, s)]) for i, s in enumerate((0.5, -0.5))],
    "jax_cnn": [("main", [normal((2, 28, 28, 1), 0)])],
    "jax_gpt": [("main", [token_ids((1, 16), 128, 0)])],
    "jax_resnet": [("main", [normal((1, 16, 16, 3), 0)])],
    "jax_mobilenetv2": [("main", [normal((1, 32, 32, 3), 0)])],
    "jax_bert": [("main", [token_ids((2, 16), 100, 0), padding_mask((2, 16), 5)])],
    "jax_bert_bf16": [("main", [token_ids((2, 16), 100, 0), padding_mask((2, 16), 5)])],
    "jax_lstm": [("main", [normal((2, 8, 16), 0)])],
    "jax_mixer": [("main", [normal((1, 32, 32, 3), 0)])],
    "jax_gnn": [("main", [normal((48, 16), 0), *graph_edges(192, 48, 0)])],
    "jax_unet": [("main", [normal((1, 16, 16, 4), 0)])],
    "jax_llama": [("main", [token_ids((1, 8), 64, seed), np.array(start, np.int32)])
                  for seed, start in ((0, 3), (1, 11))],
    "torch_encoder": [("main", [token_ids((2, 12), 50, 0).astype(np.int64)])],
    "torch_unet": [("main", [normal((1, 4, 16, 16), 0)])],
    "torch_gpt": [("main", [token_ids((2, 12), 50, 0).astype(np.int64), padding_mask((2, 12), 4).astype(np.int64)])],
    **{name: [("main", [token_ids((2, 16), 64, 0).astype(np.int64), padding_mask((2, 16), 4).astype(np.int64)])]
       for name in ("hf_gpt2", "hf_llama", "hf_t5")},
    "hf_vit": [("main", [normal((1, 3, 32, 32), 0)])],
}
