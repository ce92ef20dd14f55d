"""Tensor betas, as torch.optim.AdamW accepts them: 1-element float tensors, read on the host at
each step (a scheduler may change them in place), with the same bits as the same float betas."""
import pytest
import torch
from test_optim import backward, make_batches, make_model, torch_seed

from ascend_ema_adam.optim import FusedEmaAdamW


def _train(seed, betas_of, steps=6, change_at=3):
    """Trains a small model for `steps` steps; at `change_at` the betas become (0.8, 0.99) — in
    place for tensor betas, by assignment for floats. Returns the weights and EMA."""
    model = make_model(seed)
    betas = betas_of(0.9, 0.999)
    opt = FusedEmaAdamW(model.parameters(), lr=1e-2, betas=betas, ema_decay=0.9)
    for i, batch in enumerate(make_batches(seed, steps)):
        if i == change_at:
            if isinstance(betas[0], torch.Tensor):
                betas[0].fill_(0.8)
                betas[1].fill_(0.99)
            else:
                opt.param_groups[0]["betas"] = (0.8, 0.99)
        opt.zero_grad()
        backward(model, batch)
        opt.step()
    return [p.detach().clone() for p in model.parameters()], opt.ema_state_dict(model)


def test_tensor_betas_give_the_float_betas_bits(rng):
    seed = torch_seed(rng)
    floats = _train(seed, lambda b1, b2: (b1, b2))
    tensors = _train(seed, lambda b1, b2: (torch.tensor(b1), torch.tensor([b2])))
    for a, b in zip(floats[0], tensors[0]):
        assert torch.equal(a, b)
    for key in floats[1]:
        assert torch.equal(floats[1][key], tensors[1][key]), key
    unchanged = _train(seed, lambda b1, b2: (torch.tensor(b1), torch.tensor(b2)), change_at=-1)
    assert not all(torch.equal(a, b) for a, b in zip(tensors[0], unchanged[0])), \
        "changing the tensor betas in place had no effect"


def test_tensor_betas_are_refused_as_torch_refuses_them(rng):
    p = torch.nn.Parameter(torch.randn(4))
    with pytest.raises(TypeError, match="both numbers or both Tensors"):
        FusedEmaAdamW([p], betas=(torch.tensor(0.9), 0.999))
    with pytest.raises(ValueError, match=r"Tensor betas\[1\] must be 1-element"):
        FusedEmaAdamW([p], betas=(torch.tensor(0.9), torch.tensor([0.999, 0.9])))
    with pytest.raises(ValueError, match=r"Tensor betas\[0\] must be 1-element and floating"):
        FusedEmaAdamW([p], betas=(torch.tensor(1), torch.tensor(0.999)))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        FusedEmaAdamW([p], betas=(torch.tensor(1.0), torch.tensor(0.999)))
