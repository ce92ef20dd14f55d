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


def trained(rng, steps=3, **options):
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9, **options)
    train(model, opt, make_batches(seed, steps))
    return model, opt


@pytest.mark.parametrize("helper", ["swap_ema", "ema_state_dict", "copy_to"])
def test_the_ema_helpers_before_the_first_step_warn(rng, helper):
    """Before any step there are no EMA weights: the helpers give the training weights (the EMA
    starts there), with a warning at the user's line; after a step, none."""
    model = make_model(torch_seed(rng))
    opt = FusedEmaAdamW(model.parameters(), lr=0.02)
    weights = [p.detach().clone() for p in model.parameters()]
    calls = {"swap_ema": lambda: opt.swap_ema().__enter__(),
             "ema_state_dict": lambda: opt.ema_state_dict(model), "copy_to": opt.copy_to}
    with pytest.warns(UserWarning, match="no step has made EMA weights yet") as caught:
        calls[helper]()
    assert caught[0].filename == __file__
    assert all(torch.equal(p, w) for p, w in zip(model.parameters(), weights))
    model, opt = trained(rng, steps=1)
    calls = {"swap_ema": lambda: opt.swap_ema().__enter__(),
             "ema_state_dict": lambda: opt.ema_state_dict(model), "copy_to": opt.copy_to}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calls[helper]()


def test_copy_to_parameters_as_diffusers(rng):
    """diffusers' EMAModel.copy_to(parameters): into the optimizer's own parameters (all, or
    some: the others keep their weights), or into another copy of the model (one tensor per
    parameter, in order), which then equals ema_state_dict; clear errors otherwise."""
    model, opt = trained(rng)
    params = list(model.parameters())
    emas = [opt.state[p]["ema_params"].clone() for p in params]
    weights = [p.detach().clone() for p in params]
    other = copy.deepcopy(model)
    opt.copy_to(other.parameters())
    expected = opt.ema_state_dict(model)
    assert all(torch.equal(v, expected[k]) for k, v in other.state_dict().items())
    assert all(torch.equal(p, w) for p, w in zip(params, weights))  # (ours untouched)
    opt.copy_to(params[:2])
    assert all(torch.equal(p, e) for p, e in zip(params[:2], emas[:2]))
    assert all(torch.equal(p, w) for p, w in zip(params[2:], weights[2:]))
    opt.copy_to(model.parameters())
    assert all(torch.equal(p, e) for p, e in zip(params, emas))
    with pytest.raises(ValueError, match=r"copy_to\(parameters\): 2 tensors, neither parameters "
                                         r"of this optimizer nor one per parameter of it \(6"):
        opt.copy_to(list(copy.deepcopy(model).parameters())[:2])
    wrong = [torch.zeros(p.shape[::-1]) for p in params]
    with pytest.raises(ValueError, match=r"tensor 0 has shape \[10, 24\], the optimizer's "
                                         r"parameter 0 \[24, 10\]"):
        opt.copy_to(wrong)
    assert all(torch.equal(w, torch.zeros_like(w)) for w in wrong)  # (checked before writing)
    with pytest.raises(TypeError, match=r"parameters must be tensors.*got str"):
        opt.copy_to(["weight"])


def test_copy_to_own_parameters_moves_their_masters_only(rng):
    """With master weights, copy_to(some parameters) writes their masters too (training
    continues from their EMA) and leaves the other masters alone."""
    seed = torch_seed(rng)
    model = make_model(seed, torch.bfloat16)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9, master_weights=True)
    train(model, opt, make_batches(seed, 3, torch.bfloat16))
    params = list(model.parameters())
    masters = [opt.state[p]["master_param"].clone() for p in params]
    opt.copy_to(params[:1])
    assert torch.equal(opt.state[params[0]]["master_param"], opt.state[params[0]]["ema_params"])
    assert all(torch.equal(opt.state[p]["master_param"], m)
               for p, m in zip(params[1:], masters[1:]))


def test_stores_nest(rng):
    """store(); store(); restore(); restore(): each restore brings back its own store (a stack,
    MindSpeed's collected_params_group the latest); one restore too many is the usual error."""
    model, opt = trained(rng)
    params = list(model.parameters())
    first = [p.detach().clone() for p in params]
    opt.store()
    opt.copy_to()
    second = [p.detach().clone() for p in params]
    opt.store()
    assert all(torch.equal(t, s) for t, s in zip(opt.collected_params_group[0], second))
    with torch.no_grad():
        for p in params:
            p.mul_(3.0)
    opt.restore()
    assert all(torch.equal(p, s) for p, s in zip(params, second))
    assert all(torch.equal(t, f) for t, f in zip(opt.collected_params_group[0], first))
    opt.restore()
    assert all(torch.equal(p, f) for p, f in zip(params, first))
    assert not hasattr(opt, "collected_params_group")
    with pytest.raises(RuntimeError, match=r"restore\(\) without a preceding store\(\)"):
        opt.restore()


class BatchNormNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.out = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.out(torch.relu(self.bn(self.fc(x))))


def test_the_ema_export_copies_the_buffers(rng):
    """ema_state_dict(model) holds copies of BatchNorm's running statistics as they were when it
    was exported (the next training step does not change the dict, as ema-pytorch copies
    them), the EMA for the parameters, and loads strictly; buffers='live' gives the model's own
    buffers (Module.state_dict()'s references); swap_ema leaves the buffers as they are."""
    torch.manual_seed(torch_seed(rng))
    model = BatchNormNet()
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9)
    x = torch.randn(64, 6)

    def train_step():
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()

    for _ in range(3):
        train_step()
    exported = opt.ema_state_dict(model)
    live = opt.ema_state_dict(model, buffers="live")
    now = {k: v.clone() for k, v in model.state_dict().items()}
    for key in ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked"):
        assert torch.equal(exported[key], now[key])
        assert exported[key].data_ptr() != model.state_dict()[key].data_ptr()
        assert live[key].data_ptr() == model.state_dict()[key].data_ptr()
    assert torch.equal(exported["fc.weight"], opt.state[model.fc.weight]["ema_params"])
    with opt.swap_ema():
        assert all(torch.equal(b, now[n]) for n, b in model.named_buffers())
    train_step()
    assert not torch.equal(model.bn.running_mean, now["bn.running_mean"])
    assert torch.equal(exported["bn.running_mean"], now["bn.running_mean"])  # (a copy)
    assert torch.equal(live["bn.running_mean"], model.bn.running_mean)  # (the live buffer)
    fresh = BatchNormNet()
    fresh.load_state_dict(exported)
    assert torch.equal(fresh.bn.running_var, now["bn.running_var"])
    with pytest.raises(ValueError, match=r"ema_state_dict\(buffers='average'\): 'copy'"):
        opt.ema_state_dict(model, buffers="average")


@pytest.mark.parametrize("options", [dict(step_scope="group"),
                                     dict(state_bits=8, min_8bit_size=0),
                                     dict(state_bits=8, min_8bit_size=0, step_scope="group")],
                         ids=["group steps", "8-bit", "8-bit group steps"])
def test_to_torch_state_dict_makes_a_checkpoint_torch_adamw_steps_from(rng, options):
    """torch's AdamW cannot step from a group-step or 8-bit checkpoint (KeyError: 'step' /
    'exp_avg'); to_torch_state_dict gives it each parameter's step and the decoded fp32
    moments (the operator's decode), leaves the given dict alone, and loads back into ours."""
    from ascend_ema_adam.golden8bit import decode
    from ascend_ema_adam.optim import to_torch_state_dict

    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, **options)
    batches = make_batches(seed, 5)
    train(model, opt, batches[:3])
    saved = copy.deepcopy(opt.state_dict())
    with pytest.raises(KeyError):  # (what a user meets without it)
        other = copy.deepcopy(model)
        plain = torch.optim.AdamW(other.parameters(), lr=0.02)
        plain.load_state_dict(copy.deepcopy(saved))
        train(other, plain, batches[3:4])
    before = copy.deepcopy(saved)
    converted = to_torch_state_dict(saved)
    assert_same(list(before["state"][0].items()), list(saved["state"][0].items()))
    for index, st in converted["state"].items():
        assert float(st["step"]) == 3 and st["exp_avg"].dtype == torch.float32
        assert not any(k.endswith(("_codes", "_absmax")) for k in st)
        if "exp_avg_codes" in saved["state"][index]:
            group = saved["param_groups"][0]
            want = decode(saved["state"][index]["exp_avg_codes"].numpy(),
                          saved["state"][index]["exp_avg_absmax"].numpy(),
                          group["exp_avg_qmap"].numpy())
            assert torch.equal(st["exp_avg"].reshape(-1), torch.from_numpy(want).reshape(-1))
    twin = copy.deepcopy(model)
    theirs = torch.optim.AdamW(twin.parameters(), lr=0.02)
    theirs.load_state_dict(copy.deepcopy(converted))
    train(twin, theirs, batches[3:])
    assert all(float(st["step"]) == 5 for st in theirs.state.values())
    back = FusedEmaAdamW(model.parameters(), lr=0.02, **options)
    back.load_state_dict(copy.deepcopy(converted))
    train(model, back, batches[3:])
    assert back.num_updates == 5
