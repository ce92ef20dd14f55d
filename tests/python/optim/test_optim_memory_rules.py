"""What a new user hits: a parameter listed twice, or sharing memory with another, is refused
when it is added; every memory rule of the op is checked over all of a step's launches before any
write or count (also on the cached fast path); clear messages for torch's positional order;
bf16/fp16 parameters with fp32 gradients (Megatron's ``main_grad``, torch's ``grad_dtype``)
against the golden model; ``capturable=`` accepted."""

import re

import pytest
import torch
from test_optim import torch_seed
from test_optim_misuse import snapshot, three_groups
from test_optim_mixed import golden_step, params_of
from torch_features import HAS_GRAD_DTYPE, set_grad

from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import to_numpy
from ascend_ema_adam.optim import FusedEmaAdamW

SCOPES = ["param", "group"]


def randn(gen, *shape, dtype=torch.float32):
    return torch.randn(shape, generator=gen).to(dtype)


# ------------------------------------------------------------------------------------------
# 1. Duplicate parameters, and parameters sharing memory


def test_a_parameter_listed_twice_in_a_group_is_refused(rng):
    """The issue's example: ``list(model.encoder.parameters()) + list(model.parameters())``."""
    gen = torch.Generator().manual_seed(torch_seed(rng))
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    model[0].weight.data = randn(gen, 4, 3)
    params = list(model[0].parameters()) + list(model.parameters())
    with pytest.raises(ValueError, match=re.escape(
            "param_groups[0]['params'][2] (shape [4, 3]) is the parameter at "
            "param_groups[0]['params'][0]: a parameter may appear once")):
        FusedEmaAdamW(params, lr=1e-3)


def test_a_parameter_in_two_groups_is_refused_naming_both(rng):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    a, b, c = (torch.nn.Parameter(randn(gen, k + 2)) for k in range(3))
    with pytest.raises(ValueError, match=re.escape(
            "param_groups[1]['params'][1] (shape [3]) is the parameter at "
            "param_groups[0]['params'][1]")):
        FusedEmaAdamW([{"params": [a, b]}, {"params": [c, b]}])


def test_add_param_group_refuses_a_duplicate_before_storing_anything(rng):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    a, b = (torch.nn.Parameter(randn(gen, 5)) for _ in range(2))
    opt = FusedEmaAdamW([a], lr=0.01)
    a.grad = randn(gen, 5)
    opt.step()
    before = snapshot(opt)
    with pytest.raises(ValueError, match=re.escape(
            "param_groups[1]['params'][1] (shape [5]) is the parameter at "
            "param_groups[0]['params'][0]")):
        opt.add_param_group({"params": [b, a], "lr": 0.1})
    assert len(opt.param_groups) == 1
    assert snapshot(opt) == before
    with pytest.raises(ValueError, match=re.escape(
            "param_groups[1]['params'][1] (shape [5]) is the parameter at "
            "param_groups[1]['params'][0]")):
        opt.add_param_group({"params": [b, b]})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": [b]})  # once is fine
    assert len(opt.param_groups) == 2


@pytest.mark.parametrize("kind", ["same memory", "overlapping views"])
def test_parameters_sharing_memory_are_refused(rng, kind):
    """Two Parameter objects over one tensor (``nn.Parameter(t)`` shares ``t``'s memory), or
    views that overlap; views side by side without overlap are fine."""
    gen = torch.Generator().manual_seed(torch_seed(rng))
    flat = randn(gen, 12)
    if kind == "same memory":
        a, b = torch.nn.Parameter(flat), torch.nn.Parameter(flat)
        pattern = (r"^param_groups\[0\]\['params'\]\[\d\] \(shape \[12\]\) and param_groups\[0\]"
                   r"\['params'\]\[\d\] \(shape \[12\]\) share memory")
    else:
        a, b = torch.nn.Parameter(flat[:7]), torch.nn.Parameter(flat[5:])
        pattern = r"^param_groups\[0\]\['params'\]\[\d\] \(shape \[\d\]\) and .* share memory"
    with pytest.raises(ValueError, match=pattern):
        FusedEmaAdamW([a, b])
    side_by_side = [torch.nn.Parameter(flat[:6]), torch.nn.Parameter(flat[6:])]
    opt = FusedEmaAdamW(side_by_side, lr=0.01)
    for p in side_by_side:
        p.grad = randn(gen, 6)
    opt.step()  # a flat buffer of parameters (Megatron's layout) steps as usual


def test_tied_named_parameters_are_still_kept_once(rng):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    emb = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    emb.weight.data = randn(gen, 5, 3)
    model = torch.nn.Sequential(emb, head)
    opt = FusedEmaAdamW(model.named_parameters(remove_duplicate=False))
    assert len(opt.param_groups[0]["params"]) == 1


# ------------------------------------------------------------------------------------------
# 2. A failing step changes nothing: the op's memory rules over every launch, before any write


def grad_is_its_param(opt, params):
    params[2].grad = params[2].detach()


def grad_is_the_ema(opt, params):
    params[3].grad = opt.state[params[3]]["ema_params"]


def grad_is_another_groups_param(opt, params):
    params[2].grad = params[0].detach()[:2, :3]        # a view of group 0's parameter


def exp_avg_sq_is_exp_avg(opt, params):
    state = opt.state[params[3]]
    state["exp_avg_sq"] = state["exp_avg"]


def param_appended_twice(opt, params):
    opt.param_groups[2]["params"].append(params[4])


def param_in_two_groups_later(opt, params):
    opt.param_groups[2]["params"].append(params[0])


def broadcast_moment(opt, params):
    opt.state[params[2]]["exp_avg"] = torch.zeros(()).expand(2, 3)


def lr_tensor_in_a_moment(opt, params):
    opt.param_groups[1]["lr"] = opt.state[params[0]]["exp_avg"].view(-1)[:1]


BREAKERS = {
    "grad is its param": (grad_is_its_param,
                          r"^param_groups\[1\]\['params'\]\[0\] \(shape \[2, 3\]\) the parameter "
                          r"and "
                          r"param_groups\[1\]\['params'\]\[0\] \(shape \[2, 3\]\) the gradient "
                          r"overlap in memory"),
    "grad is the ema": (grad_is_the_ema,
                        r"^param_groups\[1\]\['params'\]\[1\] \(shape \[4\]\) state 'ema_params' "
                        r"and param_groups\[1\]\['params'\]\[1\] \(shape \[4\]\) the gradient "
                        r"overlap in memory \(the same tensor\)"),
    "grad views another group's param": (
        grad_is_another_groups_param,
        r"^param_groups\[0\]\['params'\]\[0\] \(shape \[3, 4\]\) the parameter and "
        r"param_groups\[1\]\['params'\]\[0\] \(shape \[2, 3\]\) the gradient overlap"),
    "exp_avg_sq is exp_avg": (exp_avg_sq_is_exp_avg,
                              r"^param_groups\[1\]\['params'\]\[1\] \(shape \[4\]\) state "
                              r"'exp_avg\w*' and param_groups\[1\]\['params'\]\[1\] \(shape \[4\]\) "
                              r"state 'exp_avg\w*' overlap in memory \(the same tensor\)"),
    "param appended twice": (param_appended_twice,
                             r"^param_groups\[2\]\['params'\]\[[01]\] \(shape \[6\]\) .* and "
                             r"param_groups\[2\]\['params'\]\[[01]\] .* \(the same tensor\)"),
    "param in two groups": (param_in_two_groups_later,
                            r"^param_groups\[[02]\]\['params'\]\[[01]\] \(shape \[3, 4\]\) .* and "
                            r"param_groups\[[02]\]\['params'\]\[[01]\] .* \(the same tensor\)"),
    "broadcast moment": (broadcast_moment,
                         r"^param_groups\[1\]\['params'\]\[0\] \(shape \[2, 3\]\) state "
                         r"'exp_avg' \(stride \[0, 0\]\) addresses some elements more than once"),
    "lr tensor in a moment": (lr_tensor_in_a_moment,
                              r"^param_groups\[0\]\['params'\]\[0\] \(shape \[3, 4\]\) state "
                              r"'exp_avg' and param_groups\[1\]\['lr'\] tensor overlap"),
}


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("case", list(BREAKERS))
def test_memory_rules_fail_the_step_before_anything_changes(rng, case, scope):
    """Group 0 is healthy and launches first; three_groups took two steps, so every group is
    cached and the step takes the fast path unless the breaker changed the state."""
    breaker, pattern = BREAKERS[case]
    opt, params = three_groups(torch_seed(rng), scope)
    breaker(opt, params)
    before = snapshot(opt)
    with pytest.raises(RuntimeError) as info:
        opt.step()
    assert re.search(pattern, str(info.value)), str(info.value)
    assert str(info.value).endswith("(the step changed nothing)")
    assert snapshot(opt) == before


@pytest.mark.parametrize("scope", SCOPES)
def test_grads_that_are_views_of_one_buffer_step_on_the_fast_path(rng, scope, monkeypatch):
    """Gradients that are views of one flat buffer (Megatron's ``main_grad``) share memory with
    each other, not with anything updated: the step runs, and the full memory check runs only
    when a group was checked in full (each optimizer's first step), not on the cached steps."""
    import ascend_ema_adam.optim._memory as memory
    gen = torch.Generator().manual_seed(torch_seed(rng))
    sizes = [(3, 4), (5,), (7,)]
    params = [torch.nn.Parameter(randn(gen, *s)) for s in sizes]
    opt = FusedEmaAdamW(params, lr=0.01, step_scope=scope)
    ref = FusedEmaAdamW([torch.nn.Parameter(p.detach().clone()) for p in params], lr=0.01,
                        step_scope=scope)
    full_checks = []
    check = memory.check_step_memory
    monkeypatch.setattr(memory, "check_step_memory", lambda *a: full_checks.append(1) or check(*a))
    for _ in range(4):
        buffer = randn(gen, sum(p.numel() for p in params))
        views = buffer.split([p.numel() for p in params])
        for p, q, v in zip(params, ref.param_groups[0]["params"], views):
            p.grad = v.view(p.shape)
            q.grad = v.view(p.shape).clone()
        opt.step()
        ref.step()
    assert len(full_checks) == 2  # the first step of each optimizer
    for p, q in zip(params, ref.param_groups[0]["params"]):
        assert torch.equal(p, q)
        assert torch.equal(opt.state[p]["ema_params"], ref.state[q]["ema_params"])


# ------------------------------------------------------------------------------------------
# 3. Messages; 16-bit parameters with fp32 gradients


@pytest.mark.parametrize("args, name", [
    ((1e-3, (0.9, 0.95)), "eps"),
    ((1e-3, (0.9, 0.95), 1e-8), "eps"),
    ((1e-3, 1e-8, 0.9), "betas"),
    (((0.9, 0.95),), "lr"),
])
def test_torch_positional_order_gets_a_clear_type_error(rng, args, name):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    p = torch.nn.Parameter(randn(gen, 3))
    with pytest.raises(TypeError) as info:
        FusedEmaAdamW([p], *args)
    text = str(info.value)
    assert text.startswith(f"{name} must be"), text
    assert "not supported between" not in text
    if name != "lr":
        assert "params, lr, eps, betas, weight_decay, ema_decay, amsgrad" in text, text
        assert "torch.optim.AdamW's (params, lr, betas, eps" in text, text


def test_a_group_value_of_the_wrong_kind_is_a_type_error_naming_the_group(rng):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    a, b = (torch.nn.Parameter(randn(gen, 3)) for _ in range(2))
    with pytest.raises(TypeError, match=r"^betas must be a pair of numbers"):
        FusedEmaAdamW([{"params": [a]}, {"params": [b], "betas": 0.9}])
    opt = FusedEmaAdamW([a, b])
    opt.param_groups[0]["eps"] = (0.9, 0.999)
    a.grad, b.grad = randn(gen, 3), randn(gen, 3)
    with pytest.raises(TypeError, match=r"^param_groups\[0\]: eps must be a number, got tuple"):
        opt.step()


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("options", [
    dict(), dict(state_dtype=None), dict(master_weights=True),
    dict(master_weights=True, amsgrad=True, maximize=True, adam_w_mode=False),
], ids=["fp32-state", "16bit-state", "masters", "masters-amsgrad-maximize-adam"])
def test_16bit_params_with_fp32_grads_equal_the_golden_bit_for_bit(rng, options, scope):
    """bf16/fp16 parameters whose gradients are fp32 (Megatron's main_grad) beside fp32
    parameters and 16-bit ones with 16-bit gradients: every step equals the golden model's
    list-op entry with an fp32 gradient, bit for bit; the launches split by gradient dtype."""
    seed = torch_seed(rng)
    params = params_of(seed, n=9)
    wide = {k for k, p in enumerate(params) if p.dtype != torch.float32 and k % 2 == 0}
    assert wide and any(p.dtype != torch.float32 for k, p in enumerate(params) if k not in wide)
    opt = FusedEmaAdamW(params, lr=1e-2, eps=1e-3, ema_decay=0.9, step_scope=scope, **options)
    group = opt.param_groups[0]
    gen = torch.Generator().manual_seed(seed + 1)
    for n in range(1, 7):
        for k, p in enumerate(params):
            g = randn(gen, *p.shape) * 0.1
            set_grad(p, None if (k == 1 and n < 3) else (g if k in wide else g.to(p.dtype)))
        decay = min(0.9, (1 + n) / (10 + n))
        expected = {p: golden_step(opt, group, p, n if scope == "group" else
                                   int(opt.state[p]["step"]) + 1 if p in opt.state else 1, decay)
                    for p in params if p.grad is not None}
        opt.step()
        for p, e in expected.items():
            st = opt.state[p]
            assert golden.bit_equal(to_numpy(st.get("master_param", p)), e.var)
            assert golden.bit_equal(to_numpy(st["exp_avg"]), e.m)
            assert golden.bit_equal(to_numpy(st["exp_avg_sq"]), e.v)
            assert golden.bit_equal(to_numpy(st["ema_params"]), e.s)
            if e.max_v is not None:
                assert golden.bit_equal(to_numpy(st["max_exp_avg_sq"]), e.max_v)
            if e.copy is not None:
                assert golden.bit_equal(to_numpy(p), e.copy)


@pytest.mark.skipif(not HAS_GRAD_DTYPE, reason=f"torch {torch.__version__} has no Tensor.grad_dtype: "
                    "autograd leaves a bf16 parameter only a bf16 gradient (docs/OPTIMIZER.md)")
def test_grad_dtype_fp32_from_autograd_steps_like_an_fp32_grad(rng):
    """torch's ``grad_dtype``: autograd leaves a bf16 parameter an fp32 gradient; the step equals
    one given the same fp32 gradients by assignment, and foreach=False gives the same bits."""
    seed = torch_seed(rng)
    gen = torch.Generator().manual_seed(seed)
    x = randn(gen, 8, 4)
    start = randn(gen, 4, 3).bfloat16()
    runs, grads = [], []
    for foreach in (None, None, False):
        w = torch.nn.Parameter(start.clone())
        opt = FusedEmaAdamW([w], lr=1e-2, foreach=foreach, master_weights=True)
        w.grad_dtype = torch.float32
        for k in range(3):
            w.grad = None
            if not runs:
                (x @ w.float()).square().sum().backward()
                assert w.grad.dtype == torch.float32
                grads.append(w.grad.clone())
            else:
                w.grad = grads[k].clone()
            opt.step()
        runs.append((w.detach().clone(), opt.state[w]["master_param"].clone(),
                     opt.state[w]["ema_params"].clone()))
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other))


# ------------------------------------------------------------------------------------------
# 4. capturable=


@pytest.mark.parametrize("capturable", [False, True])
def test_capturable_is_accepted_and_changes_nothing(rng, capturable):
    gen = torch.Generator().manual_seed(torch_seed(rng))
    start = randn(gen, 6, 3)
    grads = [randn(gen, 6, 3) for _ in range(3)]
    results = []
    for kwargs in (dict(capturable=capturable), dict()):
        p = torch.nn.Parameter(start.clone())
        opt = FusedEmaAdamW([p], 1e-2, **kwargs)
        assert "capturable" not in opt.defaults and "capturable" not in opt.param_groups[0]
        for g in grads:
            p.grad = g.clone()
            opt.step()
        results.append((p.detach().clone(), opt.state[p]["ema_params"].clone()))
    assert torch.equal(results[0][0], results[1][0]) and torch.equal(results[0][1], results[1][1])
    with pytest.raises(TypeError, match="capturable must be True or False"):
        FusedEmaAdamW([torch.nn.Parameter(start.clone())], capturable="yes")
