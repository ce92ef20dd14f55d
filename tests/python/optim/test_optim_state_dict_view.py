"""What ``FusedEmaAdamW.state_dict()`` hands out (docs/OPTIMIZER.md, Checkpoints): a view of the
live state, as torch's, not a snapshot. A later step shows up in a kept dict (the moments and
EMA are updated in place, the per-parameter dicts get the new step); ``copy.deepcopy`` and
``torch.save`` keep a snapshot; a step tensor the dict handed out is never written, and a dict
given to ``load_state_dict`` is not changed by later steps."""

import copy
import io

import pytest
import torch
from test_optim import backward, make_batches, make_model, torch_seed

from ascend_ema_adam.optim import FusedEmaAdamW


def tensors_of(state_dict):
    """Every tensor of a state dict, in a fixed order, with where it is."""
    out = []
    for k in sorted(state_dict["state"]):
        for key in sorted(state_dict["state"][k]):
            out.append((f"state[{k}][{key}]", state_dict["state"][k][key]))
    for i, group in enumerate(state_dict["param_groups"]):
        out += [(f"param_groups[{i}][{key}]", value) for key, value in sorted(group.items())
                if isinstance(value, torch.Tensor)]
    return out


def assert_same_values(a, b):
    ta, tb = tensors_of(a), tensors_of(b)
    assert [name for name, _ in ta] == [name for name, _ in tb]
    for (name, x), (_, y) in zip(ta, tb):
        assert x.dtype == y.dtype and torch.equal(x, y), name


@pytest.mark.parametrize("scope", ["param", "group"])
def test_state_dict_is_a_view_and_deepcopy_a_snapshot(rng, scope):
    seed = torch_seed(rng)
    batches = make_batches(seed, 6)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    params = list(model.parameters())
    for batch in batches[:3]:  # (cached by now: the steps advance in place until handed out)
        backward(model, batch)
        opt.step()

    kept = opt.state_dict()
    snapshot = copy.deepcopy(opt.state_dict())
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    before = copy.deepcopy(kept)
    handed_out = ([kept["state"][k]["step"] for k in range(len(params))] if scope == "param"
                  else [kept["param_groups"][0]["step"]])
    values = [t.clone() for t in handed_out]

    for batch in batches[3:]:
        backward(model, batch)
        opt.step()

    # the kept dict is the live state: its per-parameter dicts are the optimizer's own
    for k, p in enumerate(params):
        assert kept["state"][k] is opt.state[p]
        for key in ("exp_avg", "exp_avg_sq", "ema_params"):
            assert kept["state"][k][key] is opt.state[p][key]
            assert not torch.equal(kept["state"][k][key], before["state"][k][key]), (k, key)
    # ... but no step tensor it handed out was written
    assert all(torch.equal(t, v) for t, v in zip(handed_out, values))
    if scope == "param":
        assert all(float(kept["state"][k]["step"]) == 6 for k in range(len(params)))
    else:
        assert kept["param_groups"][0]["step"] is handed_out[0]  # (a copy of the group dict)
        assert opt.param_groups[0]["step"].tolist() == [6]
    # deepcopy and torch.save kept the values of the moment they were made
    assert_same_values(snapshot, before)
    buffer.seek(0)
    assert_same_values(torch.load(buffer), before)

    # torch's AdamW hands out its live dicts too
    adamw = torch.optim.AdamW(model.parameters())
    backward(model, batches[0])
    adamw.step()
    assert adamw.state_dict()["state"][0] is adamw.state[params[0]]


@pytest.mark.parametrize("scope", ["param", "group"])
def test_a_loaded_dict_is_not_changed_by_later_steps(rng, scope):
    seed = torch_seed(rng)
    batches = make_batches(seed, 5)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    for batch in batches[:2]:
        backward(model, batch)
        opt.step()
    given = copy.deepcopy(opt.state_dict())
    expected = copy.deepcopy(given)
    resumed = copy.deepcopy(model)
    opt2 = FusedEmaAdamW(resumed.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    opt2.load_state_dict(given)
    for batch in batches[2:]:
        backward(resumed, batch)
        opt2.step()
    assert_same_values(given, expected)
    assert opt2.num_updates == 5
