"""FusedEmaAdamW's launches (issue 10): the multi-tensor op once per (device, dtype[, step])
bucket of a group by default, the single op once per parameter with foreach=False, the same bits
either way; and the group cache that keeps step() cheap per parameter, against an optimizer that
checks everything at every step, through everything that must invalidate it."""

import numpy as np
import pytest
import torch

import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from torch_features import set_grad

from ascend_ema_adam import _C
from ascend_ema_adam.optim import FusedEmaAdamW, fused_ema_adamw

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def mixed_params(seed, n=7):
    """Parameters of every float dtype and several shapes (empty and one-element ones too)."""
    gen = torch.Generator().manual_seed(seed)
    shapes = [(5, 3), (0,), (1,), (33,), (2, 2, 2), (17,), (4, 9)]
    return [torch.nn.Parameter((torch.randn(shapes[k % len(shapes)], generator=gen) * 0.1)
                               .to(DTYPES[k % 3])) for k in range(n)]


def set_grads(params, seed, skip=()):
    gen = torch.Generator().manual_seed(seed)
    for k, p in enumerate(params):
        g = (torch.randn(p.shape, generator=gen) * 0.01).to(p.dtype)
        p.grad = None if k in skip else g


def seed_of(rng):
    return int(rng.integers(2**31))


def full_checks_only(opt):
    """The optimizer with its group cache disabled: every step runs every check."""
    opt._launch_cache.remember = lambda *args, **kwargs: False
    return opt


def assert_same(a, b):
    for pa, pb in zip(a.param_groups[0]["params"], b.param_groups[0]["params"]):
        assert torch.equal(pa, pb)
        assert (pa in a.state) == (pb in b.state)
        for key in ("exp_avg", "exp_avg_sq", "ema_params", "step"):
            if key in a.state.get(pa, {}):
                assert torch.equal(a.state[pa][key], b.state[pb][key]), key


@pytest.mark.parametrize("scope", ["param", "group"])
def test_list_launches_equal_per_parameter_launches(rng, monkeypatch, scope):
    """Mixed dtypes in one group: one list launch per (device, dtype) bucket per step, the
    same bits as one single-op launch per parameter, also once a late parameter joins."""
    seed = seed_of(rng)
    launches = []
    real = optim_module.apply_fused_ema_adam_list

    def spy(grad, var, m, v, s, step, *args):
        launches.append(({str(p.dtype) for p in var}, int(step)))
        return real(grad, var, m, v, s, step, *args)

    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    params = [mixed_params(seed) for _ in range(2)]
    opts = [FusedEmaAdamW(ps, lr=0.05, ema_decay=0.9, weight_decay=0.1, step_scope=scope,
                          foreach=f, state_dtype=None) for ps, f in zip(params, (None, False))]
    for step in range(5):
        launches.clear()
        for ps, opt in zip(params, opts):
            set_grads(ps, seed + step, skip=(3,) if step < 3 else ())
            opt.step()
        assert_same(*opts)
        # one launch per (dtype, step value) of the parameters updated; the per-parameter
        # optimizer made none (it launches the single op)
        ps, opt = params[1], opts[1]
        updated = [p for k, p in enumerate(ps) if step >= 3 or k != 3]
        value = (lambda p: int(opt.state[p]["step"])) if scope == "param" else (
            lambda p: int(opt.param_groups[0]["step"]))
        expected = {(str(p.dtype), value(p)) for p in updated}
        assert all(len(ds) == 1 for ds, _ in launches)  # a launch holds one dtype
        assert sorted((min(ds), v) for ds, v in launches) == sorted(expected)


def test_functional_groups_by_device_and_dtype(rng, monkeypatch):
    """MindSpeed's functional form: one list launch per dtype, results equal to the optimizer's
    per-parameter path."""
    seed = seed_of(rng)
    calls = []
    real = optim_module.apply_fused_ema_adam_list

    def spy(grads, vars, *args, **kwargs):
        calls.append({p.dtype for p in vars})
        return real(grads, vars, *args, **kwargs)

    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    params = mixed_params(seed)
    set_grads(params, seed)
    state = [[torch.zeros_like(p) for p in params] for _ in range(2)] + [
        [p.detach().clone() for p in params]]
    reference = [p.detach().clone() for p in params]
    ref_state = [[t.clone() for t in ts] for ts in state]
    step = torch.tensor([2])
    fused_ema_adamw([p.grad for p in params], [p.data for p in params], *state, step, 0.01, 0.9,
                    0.9, 0.999, 1e-8, 1, True, 0.1)
    assert sorted(calls, key=str) == [{t} for t in sorted(DTYPES, key=str)]
    for k, p in enumerate(params):
        optim_module.npu_apply_fused_ema_adamw(p.grad, reference[k], ref_state[0][k],
                                               ref_state[1][k], ref_state[2][k], step, 0.01, 0.9,
                                               0.9, 0.999, 1e-8, 1, True, 0.1)
        assert torch.equal(p, reference[k])
        assert all(torch.equal(state[i][k], ref_state[i][k]) for i in range(3))
    with pytest.raises(ValueError, match="one of each per parameter"):
        fused_ema_adamw([p.grad for p in params], [p.data for p in params][:-1], *state, step,
                        0.01, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.1)


# ------------------------------------------------------------------------------------------
# The group cache: whatever changes between steps, the cached optimizer does what the fully
# checking one does, bit for bit (or raises the same error)


def twin_optimizers(seed, scope="param", **kwargs):
    params = [mixed_params(seed) for _ in range(2)]
    opts = [FusedEmaAdamW(ps, lr=0.05, ema_decay=0.9, step_scope=scope, **kwargs)
            for ps in params]
    full_checks_only(opts[1])
    return params, opts


def step_both(params, opts, seed, **kwargs):
    for ps, opt in zip(params, opts):
        set_grads(ps, seed, **kwargs)
        opt.step()
    assert_same(*opts)


CHANGES = {
    "state tensor replaced": lambda opt, ps: opt.state[ps[0]].__setitem__(
        "exp_avg", torch.full_like(ps[0], 0.01)),
    "state dict replaced": lambda opt, ps: opt.state.__setitem__(ps[2], {
        **opt.state[ps[2]], "ema_params": ps[2].detach().clone() * 0.5}),
    "step tensor replaced": lambda opt, ps: opt.state[ps[0]].__setitem__(
        "step", torch.tensor(9.0)),
    "step tensor written in place": lambda opt, ps: opt.state[ps[6]]["step"].fill_(7.0),
    "param list edited": lambda opt, ps: opt.param_groups[0]["params"].pop(),
    "state reloaded": lambda opt, ps: opt.load_state_dict(opt.state_dict()),
    "parameter's data replaced (same kind)": lambda opt, ps: setattr(
        ps[4], "data", ps[4].detach().clone() + 1),
}


CASES = [(change, scope) for scope in ("param", "group") for change in CHANGES
         if not (scope == "group" and change.startswith("step tensor"))]  # no such state


@pytest.mark.parametrize("change,scope", CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_cache_follows_every_change(rng, change, scope):
    seed = seed_of(rng)
    params, opts = twin_optimizers(seed, scope)
    for k in range(2):
        step_both(params, opts, seed + k)
    assert 0 in opts[0]._launch_cache.groups and not opts[1]._launch_cache.groups
    for ps, opt in zip(params, opts):
        CHANGES[change](opt, ps)
    for k in range(2, 5):
        step_both(params, opts, seed + k)


# The cached group's per-step reads in C++ (_C.CachedGradients, _C.UpdatedStorages): each
# refusal sends the step to the full check, so each must refuse what it is meant to.


def cached_gradients(seed):
    gen = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=gen)) for s in ((3, 2), (4,), (5,))]
    params[2] = torch.nn.Parameter(params[2].detach().bfloat16())
    params[0].grad = torch.randn(3, 2, generator=gen)
    set_grad(params[2], torch.randn(5, generator=gen))  # fp32 for bf16, as mixed precision
    return params, _C.CachedGradients(params, [params[0].grad, params[2].grad], [1])


class Subclass(torch.Tensor):
    pass


GRADIENT_CHANGES = {
    "another parameter": lambda ps: ps.__setitem__(0, torch.nn.Parameter(ps[0].detach())),
    "a parameter fewer": lambda ps: ps.pop(),
    "gradient where none was": lambda ps: setattr(ps[1], "grad", torch.zeros(4)),
    "no gradient where one was": lambda ps: setattr(ps[2], "grad", None),
    "other dtype": lambda ps: setattr(ps[2], "grad", ps[2].grad.bfloat16()),
    "other shape": lambda ps: (setattr(ps[0], "data", ps[0].data.reshape(2, 3)),
                               setattr(ps[0], "grad", torch.zeros(2, 3))),
    "sparse": lambda ps: setattr(ps[0], "grad", ps[0].grad.to_sparse()),
    "a tensor subclass": lambda ps: setattr(ps[0], "grad", ps[0].grad.as_subclass(Subclass)),
}


@pytest.mark.parametrize("change", GRADIENT_CHANGES)
def test_cached_gradients_read_refuses_every_change(rng, change):
    """read() returns this step's gradients (the objects themselves) while the parameters and
    the gradients' presence, dtype, shape, layout and type match what was cached; else None."""
    params, cached = cached_gradients(seed_of(rng))
    got = cached.read(params, None)
    assert got[0] is params[0].grad and got[1] is params[2].grad and len(got) == 2
    params[0].grad = torch.randn(3, 2)  # new gradients of the same kind: read
    assert cached.read(params, None)[0] is params[0].grad
    GRADIENT_CHANGES[change](params)
    assert cached.read(params, None) is None


def test_cached_gradients_read_refuses_a_gradient_in_an_updated_storage(rng):
    params, cached = cached_gradients(seed_of(rng))
    state = torch.randn(40)
    updated = _C.UpdatedStorages(list(params) + [state[8:16]])
    assert cached.read(params, updated) is not None
    params[0].grad = state[20:26].view(3, 2)  # same storage as an updated tensor
    assert cached.read(params, updated) is None
    assert cached.read(params, None) is not None  # (no storages given: not checked)
    assert updated.touches_any([state[30:31]]) and not updated.touches_any([torch.zeros(40)])
    assert not updated.touches_any([torch.empty(0)])


# each way an updated tensor can get other memory or another view: (params, state, buffer) ->
# what must stay alive meanwhile
IN_PLACE_CHANGES = {
    "new memory": lambda params, state, buffer: setattr(params[0], "data",
                                                        params[0].detach().clone()),
    "reshaped": lambda params, state, buffer: setattr(params[0], "data", params[0].data.view(16)),
    # same address, size and shape
    "other dtype": lambda params, state, buffer: setattr(state, "data",
                                                         state.data.view(torch.int32)),
    "moved in storage": lambda params, state, buffer: setattr(params[1], "data", buffer[24:40]),
    "storage resized": lambda params, state, buffer: params[1].untyped_storage().resize_(320),
    # the same address, shared copy-on-write with the clone: a write must copy it first
    "copy-on-write": lambda params, state, buffer: torch._lazy_clone(params[0].detach()),
}


@pytest.mark.parametrize("change", IN_PLACE_CHANGES)
def test_updated_storages_in_place_sees_new_memory(rng, change):
    """in_place() holds while the updated tensors keep their memory and description (writes into
    them included), and fails for each way a tensor can get other memory or another view."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    buffer = torch.randn(64, generator=gen)
    params = [torch.nn.Parameter(torch.randn(4, 4, generator=gen)),
              torch.nn.Parameter(buffer[8:24])]
    state = torch.randn(4, 4, generator=gen)  # (a moment: no gradient, any dtype may be set)
    updated = _C.UpdatedStorages(params + [state])
    with torch.no_grad():  # writes into the same memory
        params[0].mul_(2.0)
        params[1].add_(1.0)
    assert updated.in_place()
    kept = IN_PLACE_CHANGES[change](params, state, buffer)  # noqa: F841 (alive for the check)
    assert not updated.in_place()


def test_cached_gradients_read_through_torch_function_modes(rng):
    """Under a TorchFunctionMode the gradients are read through Tensor.grad's getter, as the
    full check reads them (the mode sees each read)."""
    params, cached = cached_gradients(seed_of(rng))

    class Reads(torch.overrides.TorchFunctionMode):
        count = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__self__", None) is torch.Tensor.grad:  # (its __get__)
                Reads.count += 1
            return func(*args, **(kwargs or {}))

    with Reads():
        got = cached.read(params, None)
    assert Reads.count == len(params) and got[1] is params[2].grad


def test_missing_gradient_takes_the_full_path_and_skips_the_parameter(rng):
    seed = seed_of(rng)
    params, opts = twin_optimizers(seed)
    step_both(params, opts, seed)
    frozen = [ps[5].detach().clone() for ps in params]
    step_both(params, opts, seed + 1, skip=(5,))
    assert all(torch.equal(ps[5], f) for ps, f in zip(params, frozen))
    step_both(params, opts, seed + 2)


def _sparse_grad(ps):
    ps[2].grad = ps[2].grad.to_sparse()


def _float64_param(ps):
    ps[2].data = ps[2].data.double()
    ps[2].grad = ps[2].grad.double() if ps[2].grad.dtype == torch.float64 else torch.zeros(
        ps[2].shape, dtype=torch.float64)


def _reshaped_param(ps):
    ps[0].data = ps[0].data.reshape(-1)
    ps[0].grad = ps[0].grad.reshape(-1)


@pytest.mark.parametrize("breaker,error", [
    (_sparse_grad, r"^param_groups\[0\]\['params'\]\[2\]: AdamW does not support sparse "
                   r"gradients$"),
    (_float64_param, r"^param_groups\[0\]\['params'\]\[2\]: ema_adamw only support fp32, fp16, "
                     r"bf16. \(this parameter is torch.float64\)$"),
    (_reshaped_param, r"^param_groups\[0\]\['params'\]\[0\]: state 'exp_avg' has shape "
                      r"\[5, 3\], the parameter \[15\]$")],
    ids=["sparse", "float64", "reshaped"])
def test_a_bad_gradient_after_caching_raises_before_any_write(rng, breaker, error):
    seed = seed_of(rng)
    params, opts = twin_optimizers(seed)
    step_both(params, opts, seed)
    ps, opt = params[0], opts[0]
    assert 0 in opt._launch_cache.groups
    set_grads(ps, seed + 1)
    breaker(ps)
    before = [p.detach().clone() for p in ps]
    steps = [opt.state[p]["step"].item() for p in ps]
    with pytest.raises(RuntimeError, match=error):
        opt.step()
    assert all(torch.equal(p, b) for p, b in zip(ps, before))
    assert [opt.state[p]["step"].item() for p in ps] == steps


def test_cached_steps_are_torch_like_host_tensors(rng):
    seed = seed_of(rng)
    params, opts = twin_optimizers(seed)
    for k in range(3):
        step_both(params, opts, seed + k)
    for p in params[0]:
        step = opts[0].state[p]["step"]
        assert step.shape == () and step.device.type == "cpu" and step.dtype == torch.float32
        assert step.item() == 3
    saved = opts[0].state_dict()
    assert [float(s["step"]) for s in saved["state"].values()] == [3.0] * len(params[0])
    np.testing.assert_equal(len(opts[0]._launch_cache.groups[0].params), len(params[0]))


def test_a_saved_state_dict_keeps_its_steps(rng):
    """The cached optimizer advances its own per-parameter steps in place, but never the ones a
    state dict has handed out: the step tensors of a saved dict keep their values (torch's dict
    holds the state dicts themselves, which see later steps' new tensors, as with torch's)."""
    seed = seed_of(rng)
    params, opts = twin_optimizers(seed)
    for k in range(3):
        step_both(params, opts, seed + k)
    saved = [v["step"] for v in opts[0].state_dict()["state"].values()]
    assert [float(t) for t in saved] == [3.0] * len(params[0])
    for k in range(3, 6):
        step_both(params, opts, seed + k)
        assert [float(t) for t in saved] == [3.0] * len(params[0])
    assert all(float(opts[0].state[p]["step"]) == 6 for p in params[0])


@pytest.mark.parametrize("masters", [False, True], ids=["plain", "master-weights"])
def test_more_than_256_parameters_equal_per_parameter_launches(rng, masters):
    """650 parameters of one dtype in one group: the list op runs them as launches of at most 256
    entries (CANN's limit per dynamic list), bit for bit the per-parameter optimizer, with AMSGrad
    and (bf16 parameters) fp32 master weights, over several steps."""
    seed = seed_of(rng)
    dtype = torch.bfloat16 if masters else torch.float32
    gen = torch.Generator().manual_seed(seed)
    shapes = [tuple(int(d) for d in torch.randint(1, 7, (1 + k % 2,), generator=gen))
              for k in range(650)]
    params = [[torch.nn.Parameter((torch.randn(s, generator=torch.Generator().manual_seed(k))
                                   * 0.1).to(dtype)) for k, s in enumerate(shapes)]
              for _ in range(2)]
    opts = [FusedEmaAdamW(ps, lr=0.02, ema_decay=0.9, weight_decay=0.1, amsgrad=True,
                          master_weights=masters, foreach=f)
            for ps, f in zip(params, (None, False))]
    for step in range(3):
        for ps, opt in zip(params, opts):
            set_grads(ps, seed + step)
            opt.step()
        assert_same(*opts)
        for pa, pb in zip(*params):
            for key in ("max_exp_avg_sq", "master_param"):
                if key in opts[0].state[pa] or key in opts[1].state[pb]:
                    assert torch.equal(opts[0].state[pa][key], opts[1].state[pb][key]), key
    assert "max_exp_avg_sq" in opts[0].state[params[0][0]]
    assert ("master_param" in opts[0].state[params[0][0]]) == masters
