"""Model files written for PyTorch, run on autograd_core by changing their imports only
(`examples/ported/`): from the same weights, our logits, losses, gradients and optimizer
steps equal PyTorch's in float64."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import torch

import nn
from helpers import assert_close, host

PORTED = Path(__file__).resolve().parent.parent / "examples" / "ported"
TORCH_IMPORTS = {
    "import torch\n": "import autograd_core.torch as torch\n",
    "import torch.nn as nn\n": "import autograd_core.torch.nn as nn\n",
    "from torch.nn import functional as F\n": "from autograd_core.torch.nn import functional as F\n",
}


def load(filename: str, ours: bool) -> types.ModuleType:
    """The model file as PyTorch's module, or with its imports changed to ours (nothing else)."""
    source = (PORTED / filename).read_text()
    if ours:
        for theirs, mine in TORCH_IMPORTS.items():
            source = source.replace(theirs, mine)
        left = [line for line in source.splitlines() if line.startswith(("import torch", "from torch"))]
        assert not left, f"{filename} imports torch in a way the port does not change: {left}"
    name = f"ported_{Path(filename).stem}_{'ours' if ours else 'torch'}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, str(PORTED / filename), "exec"), module.__dict__)
    return module


def copy_weights(ours, theirs) -> None:
    """Our model given the torch model's weights, through state_dict as a user would."""
    import autograd_core as ag

    ours.load_state_dict({k: ag.tensor(host(v)) for k, v in theirs.state_dict().items()})


def test_gpt_matches_torch(backend) -> None:
    mine, ref = load("gpt_model.py", ours=True), load("gpt_model.py", ours=False)
    config = dict(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8)
    torch.manual_seed(0)
    theirs = ref.GPT(ref.GPTConfig(**config)).double()
    ours = mine.GPT(mine.GPTConfig(**config)).double()
    copy_weights(ours, theirs)
    assert ours.get_num_params() == theirs.get_num_params()

    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, 11, (3, 16)), rng.integers(0, 11, (3, 16))
    targets[0, :4] = -1  # ignored positions
    import autograd_core as ag

    logits, loss = ours(ag.tensor(idx), ag.tensor(targets))
    ref_logits, ref_loss = theirs(torch.tensor(idx), torch.tensor(targets))
    assert_close(logits, ref_logits)
    assert_close(loss, ref_loss)
    loss.backward()
    ref_loss.backward()
    ref_grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, ref_grads[name].grad, rtol=1e-9, atol=1e-12)

    opt = ours.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    ref_opt = theirs.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    opt.step()
    ref_opt.step()
    for name, p in ours.named_parameters():
        assert_close(p, ref_grads[name])

    sampled = ours.generate(ag.tensor(idx[:, :3]), max_new_tokens=4, top_k=3)
    assert sampled.shape == (3, 7) and sampled.dtype == ag.int64
    assert np.array_equal(host(sampled)[:, :3], idx[:, :3])


def test_seq2seq_transformer_matches_torch(backend) -> None:
    import autograd_core as ag

    mine, ref = load("seq2seq_transformer.py", ours=True), load("seq2seq_transformer.py", ours=False)
    sizes = dict(num_encoder_layers=2, num_decoder_layers=2, emb_size=8, nhead=2, src_vocab=13, tgt_vocab=11, dim_ff=16)
    torch.manual_seed(0)
    theirs = ref.Seq2SeqTransformer(**sizes, dropout=0.0).double()
    ours = mine.Seq2SeqTransformer(**sizes, dropout=0.0).double()
    copy_weights(ours, theirs)
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(4, 13, (7, 3)), rng.integers(4, 11, (6, 3))
    src[5:, 1], tgt[4:, 2] = ref.PAD_IDX, ref.PAD_IDX  # padded ends
    tgt_in, tgt_out = tgt[:-1], tgt[1:]

    def loss_and_logits(module, lib, model):
        s, t_in, t_out = (lib.tensor(a) for a in (src, tgt_in, tgt_out))
        masks = module.create_mask(s, t_in)
        logits = model(s, t_in, masks[0], masks[1], masks[2], masks[3], masks[2])
        return module.loss_fn(logits, t_out), logits

    loss, logits = loss_and_logits(mine, ag, ours)
    ref_loss, ref_logits = loss_and_logits(ref, torch, theirs)
    assert_close(logits, ref_logits)
    assert_close(loss, ref_loss)
    loss.backward()
    ref_loss.backward()
    ref_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, ref_params[name].grad, rtol=1e-9, atol=1e-12)

    ours.eval(), theirs.eval()
    s, ref_s = ag.tensor(src[:, :1]), torch.tensor(src[:, :1])
    decoded = mine.greedy_decode(ours, s, ag.zeros((7, 7), dtype=ag.bool), 6, ref.BOS_IDX)
    ref_decoded = ref.greedy_decode(theirs, ref_s, torch.zeros((7, 7), dtype=torch.bool), 6, ref.BOS_IDX)
    assert host(decoded).tolist() == ref_decoded.tolist()


def test_resnet_matches_torch(backend) -> None:
    """Training mode (batch statistics, running averages updated), then evaluation mode on
    the running averages."""
    import autograd_core as ag

    mine, ref = load("resnet.py", ours=True), load("resnet.py", ours=False)
    torch.manual_seed(0)
    theirs = ref.ResNet(zero_init_residual=False).double()
    ours = mine.ResNet().double()
    copy_weights(ours, theirs)
    rng = np.random.default_rng(0)
    x, labels = rng.standard_normal((4, 3, 20, 20)), rng.integers(0, 10, 4)
    out, ref_out = ours(ag.tensor(x)), theirs(torch.tensor(x))
    assert_close(out, ref_out)
    loss = nn.functional.cross_entropy(out, ag.tensor(labels))
    ref_loss = torch.nn.functional.cross_entropy(ref_out, torch.tensor(labels))
    loss.backward()
    ref_loss.backward()
    ref_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, ref_params[name].grad, rtol=1e-8, atol=1e-11)
    ref_state = theirs.state_dict()
    for name, buffer in ours.named_buffers():
        assert_close(buffer, ref_state[name])
    ours.eval(), theirs.eval()
    assert_close(ours(ag.tensor(x)), theirs(torch.tensor(x)))
