"""Scaled dot-product attention and the multi-head attention built on it, with PyTorch's
semantics.

Attention is two fused primitives (`autograd_core.primitives.attention`) and a matmul, not a
chain of small ops: the scores ``scale * q @ k^T`` (whose VJPs are two matmuls), then the
masked softmax of the scores (whose VJP reads only its output P: ``dS = P * (g - sum(g * P))``),
then ``P @ v``. Masked entries get P = 0 exactly, so a fully masked row gives P = 0 and an
output of 0 with a finite gradient, as PyTorch 2.13's `scaled_dot_product_attention` gives."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core import primitives as P
from autograd_core.autodiff.tensor import Tensor
from autograd_core.graph.registry import common_backend
from nn.functional_base import dropout, linear

_CAUSAL: dict[tuple[int, int, int], Any] = {}  # (id(backend), L, S) -> the lower-triangular bool array


def _causal_mask(q: Tensor, length: int, source_length: int) -> Tensor:
    """The (L, S) boolean mask of positions each query may see: key j <= query i (top-left
    aligned, as PyTorch's is_causal), made once per shape and backend."""
    key = (id(q.backend), length, source_length)
    data = _CAUSAL.get(key)
    if data is None:
        data = ag.tril(ag.ones((length, source_length), dtype=ag.bool, device=q.device)).array
        if not q.backend.is_traced(data):  # a placeholder of a trace must not outlive it
            _CAUSAL[key] = data
    return P.constant(data, q.backend)


def _as_mask(mask: Any, like: Tensor) -> Tensor | None:
    """An attention mask as a tensor on `like`'s backend: boolean, or float in `like`'s dtype."""
    if mask is None:
        return None
    mask = mask if isinstance(mask, Tensor) else ag.asarray(mask, device=like.device)
    common_backend("scaled_dot_product_attention", like, mask)
    if mask.dtype == "bool":
        return mask
    if not ag.isdtype(mask.dtype, "real floating"):
        raise TypeError(f"attention: a mask must be boolean or floating-point, got {mask.dtype.name}")
    return ag.astype(mask, like.dtype, copy=False)


def attention_weights(
    query: Tensor, key: Tensor, attn_mask: Any = None, is_causal: bool = False, scale: float | None = None
) -> Tensor:
    """``softmax(scale * query @ key^T + mask)`` over the keys: the weights that
    `scaled_dot_product_attention` applies to the values (before dropout), of shape (..., L, S).
    A boolean `attn_mask` is True where a query may attend; a float one is added."""
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
    common_backend("scaled_dot_product_attention", query, key)
    if query.dtype != key.dtype:
        raise TypeError(
            f"scaled_dot_product_attention: query and key must have the same dtype, got "
            f"{query.dtype.name} and {key.dtype.name}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"scaled_dot_product_attention: query and key must have the same embedding size, got "
            f"shapes {query.shape} and {key.shape}"
        )
    # no embedding (E = 0): every score is an empty sum, 0, at any scale
    scale = 1 / (math.sqrt(query.shape[-1]) or 1.0) if scale is None else scale
    scores = P.attention_scores.bind(query, key, scale)
    mask = _causal_mask(query, query.shape[-2], key.shape[-2]) if is_causal else _as_mask(attn_mask, query)
    if mask is not None and (shape := np.broadcast_shapes(scores.shape, mask.shape)) != scores.shape:
        scores = ag.broadcast_to(scores, shape)
    return P.masked_softmax.bind(scores, mask)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(scale * query @ key^T + mask) @ value`` for query (..., L, E), key (..., S, E) and
    value (..., S, Ev), as PyTorch's: a boolean `attn_mask` is True where a query may attend, a
    float one is added to the scores; `is_causal` lets query i see keys 0..i; `scale` defaults
    to 1/sqrt(E); `dropout_p` drops attention weights (always, as PyTorch: pass 0 in eval);
    `enable_gqa` shares each key/value head among query heads (axis -3). A row that may attend
    to nothing gives zeros.

    >>> import autograd_core as ag, nn.functional as F
    >>> q = k = v = ag.ones((1, 2, 3, 4))
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (1, 2, 3, 4)
    """
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = (_share_heads(t, query.shape[-3]) for t in (key, value))
    weights = attention_weights(query, key, attn_mask, is_causal, scale)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    common_backend("scaled_dot_product_attention", weights, value)
    return ag.matmul(weights, value)


def _share_heads(t: Tensor, heads: int) -> Tensor:
    """Each of t's heads (axis -3) repeated for the query heads that share it (grouped-query)."""
    if heads % t.shape[-3]:
        raise ValueError(
            f"scaled_dot_product_attention: enable_gqa needs the query heads ({heads}) to be a "
            f"multiple of the key/value heads ({t.shape[-3]})"
        )
    return ag.repeat(t, heads // t.shape[-3], axis=-3)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Any = None,
    need_weights: bool = True,
    attn_mask: Any = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Any = None,
    static_v: Any = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
    *,
    batch_first: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """PyTorch's multi-head attention: project query (L, N, E), key (S, N, kdim) and value
    (S, N, vdim) (or (N, L, E)... with `batch_first`, an extension; or unbatched (L, E)...),
    attend per head, project back. Returns the output and, with `need_weights`, the attention
    weights (N, L, S) averaged over the heads (or (N, H, L, S)). Masks use MultiheadAttention's
    convention: a boolean `key_padding_mask` (N, S) or `attn_mask` (L, S) / (N*H, L, S) is True
    where attention is NOT allowed; float masks are added. `is_causal` is only a hint that
    `attn_mask` is causal, as in PyTorch. A query that may attend to nothing gives zeros."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k / static_v are not supported")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "multi_head_attention_forward: is_causal is a hint that attn_mask is causal; pass the "
            "causal attn_mask too (True above the diagonal)"
        )
    batched = query.ndim == 3
    batch_axis, seq_axis = (0, 1) if batch_first else (1, 0)
    if not batched:
        query, key, value = (ag.expand_dims(t, axis=batch_axis) for t in (query, key, value))
        key_padding_mask = None if key_padding_mask is None else ag.expand_dims(_as_mask(key_padding_mask, query), 0)
    embed_dim = query.shape[-1]
    if embed_dim != embed_dim_to_check or embed_dim % num_heads:
        raise ValueError(
            f"multi_head_attention_forward: the query's embedding size {embed_dim} must be "
            f"embed_dim={embed_dim_to_check}, a multiple of num_heads={num_heads}"
        )
    # Three projections by slices of in_proj_weight, even for self-attention: one projection
    # split in three is slower on numpy, where the split's backward scatters each third into a
    # zero array of the whole (the weight's slices are far smaller than the activations).
    projections = (
        (q_proj_weight, k_proj_weight, v_proj_weight)
        if use_separate_proj_weight
        else ag.split(in_proj_weight, embed_dim)
    )
    biases = (None,) * 3 if in_proj_bias is None else ag.split(in_proj_bias, embed_dim)
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), projections, biases))
    masks = [_as_mask(attn_mask, q), _as_mask(key_padding_mask, q)]
    if bias_k is not None and bias_v is not None:
        k, v = (
            ag.concat([t, ag.broadcast_to(b, _replace(t.shape, seq_axis, 1))], axis=seq_axis)
            for t, b in ((k, bias_k), (v, bias_v))
        )
        masks = [_pad_key(m) for m in masks]
    elif bias_k is not None or bias_v is not None:
        raise ValueError("multi_head_attention_forward: give both bias_k and bias_v, or neither")
    q, k, v = (_split_heads(t, num_heads, batch_first) for t in (q, k, v))
    if add_zero_attn:
        k, v = (ag.concat([t, ag.zeros_like(t[:, :, :1])], axis=2) for t in (k, v))
        masks = [_pad_key(m) for m in masks]
    weights = attention_weights(q, k, _merge_masks(*masks, q, k))
    if training and dropout_p > 0:
        weights = dropout(weights, dropout_p)
    out = ag.matmul(weights, v)  # (N, H, L, D)
    out = ag.permute_dims(out, (0, 2, 1, 3) if batch_first else (2, 0, 1, 3))
    out = linear(ag.reshape(out, (*out.shape[:2], embed_dim)), out_proj_weight, out_proj_bias)
    weights = (ag.mean(weights, axis=1) if average_attn_weights else weights) if need_weights else None
    if not batched:
        out = ag.squeeze(out, axis=batch_axis)
        weights = None if weights is None else ag.squeeze(weights, axis=0)
    return out, weights


def _replace(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return (*shape[:axis], n, *shape[axis + 1 :])


def _split_heads(x: Tensor, heads: int, batch_first: bool) -> Tensor:
    """(N, T, E) or (T, N, E) as (N, heads, T, E / heads)."""
    x = ag.reshape(x, (*x.shape[:2], heads, x.shape[2] // heads))
    return ag.permute_dims(x, (0, 2, 1, 3) if batch_first else (1, 2, 0, 3))


def _pad_key(mask: Tensor | None) -> Tensor | None:
    """A mask with one more key (the bias or zero key) that everyone may attend to."""
    if mask is None:
        return None
    return ag.concat([mask, ag.zeros_like(mask[..., :1])], axis=-1)


def _merge_masks(attn_mask: Tensor | None, key_padding_mask: Tensor | None, q: Tensor, k: Tensor) -> Tensor | None:
    """MultiheadAttention's masks (True = not allowed, or additive) for the heads q (N, H, L, D)
    and k (N, H, S, D), as one mask for `attention_weights` (True = allowed, or additive) of a
    shape that broadcasts to (N, H, L, S)."""
    batch, heads, length = q.shape[:3]
    source = k.shape[2]
    masks = []
    if attn_mask is not None:
        if attn_mask.shape not in ((length, source), (batch * heads, length, source)):
            raise ValueError(
                f"multi_head_attention_forward: attn_mask must have shape (L, S) = {(length, source)} "
                f"or (N * num_heads, L, S) = {(batch * heads, length, source)}, got {attn_mask.shape}"
            )
        masks.append(ag.reshape(attn_mask, (batch, heads, length, source)) if attn_mask.ndim == 3 else attn_mask)
    if key_padding_mask is not None:
        if key_padding_mask.shape != (batch, source):
            raise ValueError(
                f"multi_head_attention_forward: key_padding_mask must have shape (N, S) = "
                f"{(batch, source)}, got {key_padding_mask.shape}"
            )
        masks.append(ag.reshape(key_padding_mask, (batch, 1, 1, source)))
    if all(m.dtype == "bool" for m in masks):
        allowed = [ag.logical_not(m) for m in masks]
        return None if not masks else allowed[0] if len(allowed) == 1 else ag.logical_and(*allowed)
    additive = [
        m if m.dtype != "bool" else ag.masked_fill(ag.zeros_like(m, dtype=q.dtype), m, -math.inf) for m in masks
    ]
    return additive[0] if len(additive) == 1 else additive[0] + additive[1]
