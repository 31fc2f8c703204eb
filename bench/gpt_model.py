"""nanoGPT's character model, written once against a PyTorch-shaped `nn` namespace: the same
function builds ours (``import nn``) and PyTorch's (``torch.nn``), with nanoGPT's parameter
names, so weights move between them through ``state_dict``. Used by ``examples/gpt.py`` (the
model, its PyTorch twin and its timing baseline) and by the bench's ``gpt`` workload.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class GPTConfig:
    """nanoGPT's CPU configuration for Tiny Shakespeare (its README's laptop run)."""

    block_size: int = 64
    vocab_size: int = 65
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False


def gpt(layers: ModuleType, config: GPTConfig = GPTConfig()) -> Any:
    """The GPT of `config` built from `layers` (``nn`` or ``torch.nn``), initialised as
    nanoGPT does: N(0, 0.02) for embeddings and linear weights, N(0, 0.02 / sqrt(2 n_layer))
    for the projections back into the residual stream, zero biases. Its forward maps
    indices (batch, time) to next-token logits as rows (batch * time, vocab)."""
    functional, c = layers.functional, config

    class CausalSelfAttention(layers.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = layers.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
            self.c_proj = layers.Linear(c.n_embd, c.n_embd, bias=c.bias)
            self.resid_dropout = layers.Dropout(c.dropout)

        def forward(self, x: Any) -> Any:
            b, t, e = x.shape
            qkv = self.c_attn(x).reshape(b, t, 3, c.n_head, e // c.n_head).permute(2, 0, 3, 1, 4)
            y = functional.scaled_dot_product_attention(
                qkv[0], qkv[1], qkv[2], is_causal=True, dropout_p=c.dropout if self.training else 0.0
            )
            return self.resid_dropout(self.c_proj(y.permute(0, 2, 1, 3).reshape(b, t, e)))

    class MLP(layers.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = layers.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
            self.gelu = layers.GELU()
            self.c_proj = layers.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
            self.dropout = layers.Dropout(c.dropout)

        def forward(self, x: Any) -> Any:
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(layers.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = layers.LayerNorm(c.n_embd, bias=c.bias)
            self.attn = CausalSelfAttention()
            self.ln_2 = layers.LayerNorm(c.n_embd, bias=c.bias)
            self.mlp = MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(layers.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = c
            self.wte = layers.Embedding(c.vocab_size, c.n_embd)
            self.wpe = layers.Embedding(c.block_size, c.n_embd)
            self.drop = layers.Dropout(c.dropout)
            self.h = layers.ModuleList([Block() for _ in range(c.n_layer)])
            self.ln_f = layers.LayerNorm(c.n_embd, bias=c.bias)
            self.lm_head = layers.Linear(c.n_embd, c.vocab_size, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as in nanoGPT
            for name, p in self.named_parameters():
                if p.ndim == 2:
                    std = 0.02 / math.sqrt(2 * c.n_layer) if name.endswith("c_proj.weight") else 0.02
                    layers.init.normal_(p, 0.0, std)
                elif name.endswith("bias"):
                    layers.init.zeros_(p)

        def forward(self, idx: Any) -> Any:
            t = idx.shape[1]
            if t > c.block_size:
                raise ValueError(f"GPT: a sequence of {t} exceeds the block size {c.block_size}")
            x = self.drop(self.wte(idx) + self.wpe.weight[:t])
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return logits.reshape(-1, logits.shape[-1])

    return GPT()
