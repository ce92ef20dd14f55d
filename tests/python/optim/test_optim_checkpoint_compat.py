"""Checkpoints of v0.1.0 (the single-module ``ascend_ema_adam/optim.py``) load into today's
optimizer and continue bit for bit as they did then.

``data/optim_checkpoint_v0.1.0.pt`` was written by ``data/make_optim_checkpoint.py`` with that
code: per configuration a ``state_dict()``, the pickled optimizer object (which names its class
``ascend_ema_adam.optim.FusedEmaAdamW``), the gradients of the next steps and what the old code
made of them."""

import io
import os

import pytest
import torch

from ascend_ema_adam import FusedEmaAdamW

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                    "optim_checkpoint_v0.1.0.pt")
FIXTURE = torch.load(DATA, weights_only=True)
CONFIGS = sorted(FIXTURE["configs"])


def bits(t):
    return t.reshape(-1).view(torch.uint8) if t.is_floating_point() else t


def assert_identical(actual, expected, where="state_dict"):
    """The same structure, and tensors of the same dtype, shape and bits."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), where
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), where
        assert torch.equal(bits(actual), bits(expected)), where
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual, key=str) == sorted(expected, key=str), \
            where
        for key in expected:
            assert_identical(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), where
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_identical(a, e, f"{where}[{k}]")
    else:
        assert actual == expected, where


# Group keys added since v0.1.0, with the value a group without them takes (on load, unpickling).
NEW_GROUP_KEYS = {"max_grad_norm": None, "state_bits": 32, "min_8bit_size": 4096,
                  "num_updates_step_lead": 0, "ema_every_decay": "power"}


def expected_now(state_dict):
    """v0.1.0's expected state dict, plus the group keys added since (with their defaults)."""
    groups = [{**group, **{k: v for k, v in NEW_GROUP_KEYS.items() if k not in group}}
              for group in state_dict["param_groups"]]
    return {**state_dict, "param_groups": groups}


def continue_training(opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.clone()
        opt.step()


@pytest.mark.parametrize("name", CONFIGS)
def test_state_dict_of_v0_1_0_continues_bit_for_bit(name):
    saved = FIXTURE["configs"][name]
    params = [torch.nn.Parameter(p.clone()) for p in saved["params"]]
    opt = FusedEmaAdamW(params, **saved["options"])
    opt.load_state_dict(saved["state_dict"])
    continue_training(opt, params, saved["grads"])
    assert_identical([p.detach() for p in params], saved["expected_params"], "params")
    assert_identical(opt.state_dict(), expected_now(saved["expected_state_dict"]))


@pytest.mark.parametrize("name", CONFIGS)
def test_pickled_optimizer_of_v0_1_0_loads_and_continues_bit_for_bit(name):
    """torch.save(optimizer) of the old module unpickles as today's class (the package keeps
    the module path ``ascend_ema_adam.optim``) and continues like the old object did."""
    saved = FIXTURE["configs"][name]
    opt = torch.load(io.BytesIO(saved["pickled_optimizer"]), weights_only=False)
    assert type(opt) is FusedEmaAdamW
    params = [p for g in opt.param_groups for p in g["params"]]
    continue_training(opt, params, saved["grads"])
    assert_identical([p.detach() for p in params], saved["expected_params"], "params")
    assert_identical(opt.state_dict(), expected_now(saved["expected_state_dict"]))


def test_the_class_pickles_under_the_module_path_of_v0_1_0():
    assert FusedEmaAdamW.__module__ == "ascend_ema_adam.optim"
    assert FusedEmaAdamW.__qualname__ == "FusedEmaAdamW"
