"""Writes ``optim_checkpoint_v0.1.0.pt``: FusedEmaAdamW checkpoints and their continuations as
the single-module ``ascend_ema_adam/optim.py`` of v0.1.0 made them (run with that code, before
the optimizer became a package). ``test_optim_checkpoint_compat.py`` loads the file with today's
code and requires the same continuation bit for bit.

Per configuration the file holds the parameters and ``state_dict()`` after a few steps, the whole
pickled optimizer (which names the class by its module path), the gradients of the steps after
the save, and the parameters and ``state_dict()`` after those steps. Gradients are stored, not
drawn, so the continuation depends on nothing but the optimizer.

    git show c9801fc:ascend_ema_adam/optim.py > /tmp/optim_v0.1.0.py   # the v0.1.0 module
    AEA_OPTIM_SOURCE=/tmp/optim_v0.1.0.py .venv/bin/python tests/python/optim/data/make_optim_checkpoint.py

``AEA_OPTIM_SOURCE`` loads that file as ``ascend_ema_adam.optim`` (the package of today is not
imported); without it the installed optimizer writes the file.
"""

import copy
import importlib.util
import io
import os
import sys

import torch

import ascend_ema_adam

if os.environ.get("AEA_OPTIM_SOURCE"):
    _spec = importlib.util.spec_from_file_location("ascend_ema_adam.optim",
                                                   os.environ["AEA_OPTIM_SOURCE"])
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _module
    _spec.loader.exec_module(_module)
    ascend_ema_adam.optim = _module
from ascend_ema_adam.optim import FusedEmaAdamW  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "optim_checkpoint_v0.1.0.pt")

# name -> (parameter dtypes, constructor keywords): both step scopes, mixed precision, AMSGrad,
# maximize, the power warm-up with min decay / update-after-step / ema_every, L2 mode.
CONFIGS = {
    "param-scope-mixed": ((torch.float32, torch.bfloat16, torch.float16),
                          dict(lr=1e-2, weight_decay=0.1, ema_decay=0.99, master_weights=True,
                               amsgrad=True, ema_warmup="power", min_ema_decay=0.1,
                               ema_update_after_step=1, ema_every=2)),
    "group-scope-mindspeed": ((torch.float32, torch.bfloat16),
                              dict(lr=1e-2, ema_decay=0.9, step_scope="group", state_dtype=None,
                                   adam_w_mode=False, maximize=True)),
}
SHAPES = ((7, 5), (13,), (3, 2, 2))
STEPS_BEFORE, STEPS_AFTER = 5, 4


def grads_for(gen, params):
    return [torch.randn(p.shape, generator=gen).to(p.dtype) for p in params]


def make(name, dtypes, options, gen):
    params = [torch.nn.Parameter(torch.randn(SHAPES[k % len(SHAPES)], generator=gen).to(d))
              for k, d in enumerate(dtypes)]
    opt = FusedEmaAdamW(params, **options)
    for n in range(STEPS_BEFORE):
        for p, g in zip(params, grads_for(gen, params)):
            p.grad = None if (n < 2 and p is params[-1]) else g  # a late parameter
        opt.step()
    # a deep copy: state_dict() holds references to the state, which the steps below update
    saved = dict(params=[p.detach().clone() for p in params],
                 state_dict=copy.deepcopy(opt.state_dict()))
    buffer = io.BytesIO()
    torch.save(opt, buffer)  # the optimizer itself: pickled by class path
    saved["pickled_optimizer"] = buffer.getvalue()
    saved["options"] = options
    saved["grads"] = [grads_for(gen, params) for _ in range(STEPS_AFTER)]
    for grads in saved["grads"]:
        for p, g in zip(params, grads):
            p.grad = g.clone()
        opt.step()
    saved["expected_params"] = [p.detach().clone() for p in params]
    saved["expected_state_dict"] = opt.state_dict()
    return saved


def main():
    gen = torch.Generator().manual_seed(20260119)
    out = {"version": "0.1.0",
           "configs": {name: make(name, dtypes, options, gen)
                       for name, (dtypes, options) in CONFIGS.items()}}
    torch.save(out, PATH)
    print(f"wrote {PATH} ({os.path.getsize(PATH)} bytes) with {FusedEmaAdamW.__module__} from "
          f"{sys.modules[FusedEmaAdamW.__module__].__file__}")


if __name__ == "__main__":
    main()
