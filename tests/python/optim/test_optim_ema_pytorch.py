"""ema-pytorch's ``EMA(model, beta, update_after_step, update_every, inv_gamma, power,
min_value)`` reproduced by FusedEmaAdamW with the mapping docs/OPTIMIZER.md gives (``ema_warmup=
"power"``, ``ema_update_after_step=update_after_step + 1``, ``ema_every=update_every``,
``ema_every_decay="once"``): both average the same weight trajectory (ema-pytorch's ``update()``
after each ``step()``), and their EMAs agree within fp32 rounding (ema-pytorch computes its decay
in float32 and lerps; the kernel takes the float64 decay narrowed once): the largest difference over
300 steps is a few fp32 roundings of the weights. The default
``ema_every_decay="power"`` is another EMA (decay**k on every k-th step): it does not match."""

import pytest
import torch
from ema_pytorch import EMA
from test_optim import backward, make_batches, make_model, torch_seed

from ascend_ema_adam.optim import FusedEmaAdamW


def run(rng, steps, beta, update_after_step, update_every, every_decay, **schedule):
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.01, ema_decay=beta, ema_warmup="power",
                        ema_update_after_step=update_after_step + 1, ema_every=update_every,
                        ema_every_decay=every_decay, **schedule)
    theirs = EMA(model, beta=beta, update_after_step=update_after_step,
                 update_every=update_every, include_online_model=False,
                 **{"inv_gamma": schedule.get("inv_gamma", 1.0),
                    "power": schedule.get("power", 2 / 3),
                    "min_value": schedule.get("min_ema_decay", 0.0)})
    worst = 0.0
    for batch in make_batches(seed, steps):
        backward(model, batch)
        opt.step()
        theirs.update()
        for p, q in zip(model.parameters(), theirs.ema_model.parameters()):
            ours = opt.state[p]["ema_params"]
            worst = max(worst, (ours - q).abs().max().item())
    gap = max((p - q).abs().max().item()
              for p, q in zip(model.parameters(), theirs.ema_model.parameters()))
    return worst, gap


@pytest.mark.parametrize("beta,update_after_step,update_every,schedule", [
    (0.995, 100, 10, {}),
    (0.99, 0, 1, {}),
    (0.999, 20, 3, {"inv_gamma": 2.0, "power": 0.75, "min_ema_decay": 0.5}),
    (0.9999, 5, 7, {"power": 0.5}),
])
def test_ema_pytorch_update_every_is_reproduced(rng, beta, update_after_step, update_every,
                                                schedule):
    worst, gap = run(rng, 300, beta, update_after_step, update_every, "once", **schedule)
    # (weights of magnitude up to about 1, whose fp32 spacing is 1.2e-7: a few roundings apart;
    # the EMA-to-weights gap is about 0.1, so the comparison means something)
    assert worst < 1e-6 and gap > 1e-2, (worst, gap)


def test_the_decay_power_meaning_is_another_ema(rng):
    worst, gap = run(rng, 300, 0.995, 100, 10, "power")
    assert worst > 0.1 * gap, (worst, gap)


def test_ema_every_decay_is_checked():
    p = torch.nn.Parameter(torch.randn(3))
    with pytest.raises(ValueError, match=r"Invalid ema_every_decay: 'twice' \('power': "
                                         r"decay\*\*k on every k-th step; 'once': ema-pytorch's"):
        FusedEmaAdamW([p], ema_every_decay="twice")
