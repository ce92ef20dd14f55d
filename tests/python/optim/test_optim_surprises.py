"""What would surprise a user coming from torch, timm, diffusers or ema-pytorch, each now torch's
behaviour or a warning: a step without any gradient, 8-bit state that no parameter gets, a
checkpoint stepped by an optimizer without an EMA, the EMA helpers before the first step,
diffusers' ``copy_to(parameters)`` and nested ``store()`` / ``restore()``."""

import copy
import warnings

import pytest
import torch
from test_optim import backward, make_batches, make_model, torch_seed

from ascend_ema_adam.optim import FusedEmaAdamW


def all_state(model, opt):
    """The parameters, every state tensor and the counters, in a comparable order."""
    out = [("param", p.detach().clone()) for p in model.parameters()]
    for p in model.parameters():
        for key, value in sorted(opt.state.get(p, {}).items()):
            out.append((key, value.detach().clone() if torch.is_tensor(value) else value))
    out.append(("num_updates", opt.num_updates))
    return out


def assert_same(a, b):
    assert len(a) == len(b)
    for (key_a, x), (key_b, y) in zip(a, b):
        assert key_a == key_b
        if torch.is_tensor(x):
            assert torch.equal(x, y), key_a
        else:
            assert x == y, key_a


def test_a_step_without_any_gradient_is_a_no_op(rng):
    """Two steps with no gradient at all, then a real one: everything (weights, moments, EMA,
    steps, num_updates, the warm-up's decay) is what one real step gives, as with torch's
    AdamW; and no warning."""
    seed = torch_seed(rng)
    model, plain = make_model(seed), make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.999)
    ref = FusedEmaAdamW(plain.parameters(), lr=0.02, ema_decay=0.999)
    batches = make_batches(seed, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        opt.zero_grad()
        opt.step()
    assert opt.num_updates == 0 and not opt.state
    for batch in batches:
        backward(model, batch)
        opt.step()
        backward(plain, batch)
        ref.step()
        assert_same(all_state(model, opt), all_state(plain, ref))
    assert opt.num_updates == 3
    torch_opt = torch.optim.AdamW(copy.deepcopy(model).parameters())
    torch_opt.step()  # (torch's reference behaviour: nothing to update, no state made)
    assert not torch_opt.state


def test_a_pending_clip_request_goes_with_an_empty_step(rng):
    """clip_grad_norm_ before a step without gradients: the no-op drops the request, so the
    next real step is not clipped by a norm of other gradients."""
    seed = torch_seed(rng)
    model, plain = make_model(seed), make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02)
    ref = FusedEmaAdamW(plain.parameters(), lr=0.02)
    batch = make_batches(seed, 1)[0]
    backward(model, batch)
    opt.clip_grad_norm_(1e-3)
    opt.zero_grad()
    opt.step()
    backward(model, batch)
    opt.step()
    backward(plain, batch)
    ref.step()
    assert_same(all_state(model, opt), all_state(plain, ref))


def test_group_steps_count_an_empty_step_as_mindspeed_and_warn(rng):
    """step_scope='group' (MindSpeed's layout) keeps MindSpeed's counting, and says so."""
    model = make_model(torch_seed(rng))
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, step_scope="group")
    with pytest.warns(RuntimeWarning, match="no parameter has a gradient") as caught:
        opt.step()
    assert caught[0].filename == __file__  # (the caller's line)
    assert opt.num_updates == 1
    assert [int(g["step"]) for g in opt.param_groups] == [1]


def test_an_empty_part_of_a_partial_step_still_belongs_to_its_step(rng):
    """Inside partial_steps() (DeepSpeed's parts of one step) a part without gradients does not
    decide the step: the step counts once, with the parts that have gradients."""
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02)
    backward(model, make_batches(seed, 1)[0])
    grads = [p.grad for p in model.parameters()]
    with opt.partial_steps():
        for p in model.parameters():
            p.grad = None
        opt.step()
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        opt.step()
    assert opt.num_updates == 1
    assert all(int(opt.state[p]["step"]) == 1 for p in model.parameters())


def test_8bit_state_that_no_parameter_gets_warns():
    """state_bits=8 on a model whose parameters are all under min_8bit_size: a warning at the
    user's line (construction or add_param_group) that names the group and the way out; none
    where a parameter is large enough, and none for an empty group."""
    small = [torch.nn.Parameter(torch.randn(64, 32)), torch.nn.Parameter(torch.randn(32))]
    with pytest.warns(UserWarning, match=r"none of param_groups\[0\]'s 2 parameters has "
                                         r"min_8bit_size=4096 elements or more") as caught:
        opt = FusedEmaAdamW(small, state_bits=8)
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match=r"param_groups\[1\]'s 1 parameters") as caught:
        opt.add_param_group({"params": [torch.nn.Parameter(torch.randn(10))]})
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FusedEmaAdamW([torch.nn.Parameter(torch.randn(64, 64)), *small], state_bits=8)
        FusedEmaAdamW(small, state_bits=8, min_8bit_size=32)
        FusedEmaAdamW([{"params": []}, {"params": [torch.nn.Parameter(torch.randn(64, 64))]}],
                      state_bits=8)
        FusedEmaAdamW(small)  # (32-bit state: nothing to say)


def train(model, opt, batches):
    for batch in batches:
        backward(model, batch)
        opt.step()


def test_a_checkpoint_stepped_by_torch_adamw_warns_that_its_ema_is_stale(rng):
    """ours -> torch's AdamW (10 steps) -> ours: torch keeps the EMA and num_updates as they
    were and advances the steps, so the EMA comes back 10 steps stale; the load says so, with
    the counter to set. A checkpoint that went straight back, and one whose steps led
    num_updates when it was saved (ours trained from a torch checkpoint), load silently."""
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.99)
    batches = make_batches(seed, 30)
    train(model, opt, batches[:10])
    saved = copy.deepcopy(opt.state_dict())
    torch_opt = torch.optim.AdamW(model.parameters(), lr=0.02)
    torch_opt.load_state_dict(copy.deepcopy(saved))
    train(model, torch_opt, batches[10:20])
    back = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.99)
    with pytest.warns(UserWarning, match=r"steps \(up to 20\) ran 10 ahead of its EMA warm-up "
                                         r"counter num_updates \(10\).*set opt.num_updates = 20"):
        back.load_state_dict(torch_opt.state_dict())
    assert back.num_updates == 10  # (the checkpoint's counter: the warning gives the choice)
    assert all(k != "num_updates_step_lead" for g in back.param_groups for k in g)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.99).load_state_dict(saved)
        # a torch checkpoint (no counter) into ours, trained 5 steps, saved and loaded again
        later = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.99)
        later.load_state_dict(torch_opt.state_dict() | {"param_groups": [
            {k: v for k, v in g.items() if k != "num_updates"}
            for g in torch_opt.state_dict()["param_groups"]]})
        train(model, later, batches[20:25])
        assert later.num_updates == 5
        again = later.state_dict()
        assert again["param_groups"][0]["num_updates_step_lead"] == 20
        FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.99).load_state_dict(again)
