"""FusedEmaAdamW misused as real users do: a failing step() changes nothing (every group and
parameter is checked before the first write, errors name the group and the parameter), bad
hyper-parameters are refused at construction, and the EMA helpers never lose the training
weights (swap_ema with a bad stash device or a failure half-way, restore without store, tied
weights in ema_state_dict)."""

import copy
import math
import re

import pytest
import torch
from test_optim import backward, make_batches, make_model, torch_seed
from torch_features import set_grad

import ascend_ema_adam.optim._ema as optim_module  # where swap_ema reads the shards
from ascend_ema_adam.optim import FusedEmaAdamW

SCOPES = ["param", "group"]


# ------------------------------------------------------------------------------------------
# A failing step() changes nothing


def tensor_bytes(t: torch.Tensor):
    """Everything that identifies a tensor's value bit for bit (NaN payloads and -0.0 included)."""
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    if t.device.type == "meta":
        return (t.dtype, tuple(t.shape), t.device)
    flat = t.contiguous().reshape(-1)
    return (t.dtype, tuple(t.shape), t.device, bytes(flat.view(torch.uint8).numpy()))


def freeze(value):
    """A comparable copy of a group entry or state value (tensors by their bytes, floats by
    their repr so that NaN equals NaN)."""
    if isinstance(value, torch.Tensor):
        return tensor_bytes(value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, freeze(v)) for k, v in value.items()))
    return value


def snapshot(opt):
    """Every parameter and gradient, every state entry, every group entry and the counters."""
    params = [p for g in opt.param_groups for p in g["params"]]
    return dict(
        params=[tensor_bytes(p) for p in params],
        grads=[None if p.grad is None else tensor_bytes(p.grad) for p in params],
        grad_ids=[id(p.grad) for p in params],
        state=[(i, freeze(dict(opt.state[p]))) for i, p in enumerate(params) if p in opt.state],
        groups=[freeze({k: v for k, v in g.items() if k != "params"}) for g in opt.param_groups],
        group_params=[[id(p) for p in g["params"]] for g in opt.param_groups],
        counters=(opt.num_updates, freeze(opt.ema_decay)),
        defaults=freeze(opt.defaults),
    )


def three_groups(seed, scope, dtype=torch.float32):
    """Groups 0 and 2 healthy, group 1 the one a test breaks; two steps taken (state exists,
    steps and counters are past their initial values)."""
    gen = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(shape, generator=gen).to(dtype))
              for shape in ((3, 4), (5,), (2, 3), (4,), (6,))]
    opt = FusedEmaAdamW([{"params": params[:2]}, {"params": params[2:4], "lr": 0.02},
                         {"params": params[4:]}], lr=0.01, ema_decay=0.9, step_scope=scope)

    def new_grads():
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen).to(dtype)

    for _ in range(2):
        new_grads()
        opt.step()
    new_grads()
    return opt, params


def set_group(key, value):
    def breaker(opt, params):
        opt.param_groups[1][key] = value
    return breaker


def grad_reshaped(opt, params):
    params[2].grad.data = torch.randn(7)


def state_dtype(opt, params):
    opt.state[params[3]]["exp_avg"] = opt.state[params[3]]["exp_avg"].double()


def state_shape(opt, params):
    opt.state[params[2]]["ema_params"] = torch.zeros(2, 4)


def negative_step(opt, params):
    state = opt.state[params[3]]
    if "step" in state:  # param scope
        state["step"] = torch.tensor(-3.0)
    else:
        opt.param_groups[1]["step"] = torch.tensor([-3], dtype=torch.int64)


def sparse_grad(opt, params):
    params[2].grad = params[2].grad.to_sparse()


def float64_param(opt, params):
    p = params[3]
    p.data = p.data.double()
    p.grad = torch.randn(p.shape, dtype=torch.float64)


def complex_param(opt, params):
    p = params[2]
    p.data = p.data.to(torch.complex64)
    p.grad = torch.randn(p.shape, dtype=torch.complex64)


def lr_tensor_on_meta(opt, params):
    opt.param_groups[1]["lr"] = torch.tensor([0.01], device="meta")


# (breaker, exception, what the message must say: anchored at both ends, MindSpeed's exact text)
BREAKERS = {
    "lr=inf": (set_group("lr", math.inf), ValueError,
               r"^param_groups\[1\]: Invalid learning rate: inf \(not a finite"),
    "lr=1e39": (set_group("lr", 1e39), ValueError,
                r"^param_groups\[1\]: Invalid learning rate: 1e\+39 \(overflows fp32"),
    "lr=-1": (set_group("lr", -1.0), ValueError, r"^param_groups\[1\]: Invalid learning rate: -1"),
    "weight_decay=nan": (set_group("weight_decay", math.nan), ValueError,
                         r"^param_groups\[1\]: Invalid weight_decay value: nan"),
    "betas=(0.9,1.0)": (set_group("betas", (0.9, 1.0)), ValueError,
                        r"^param_groups\[1\]: Invalid beta parameter at index 1: 1.0"),
    "betas rounds to 1 in fp32": (set_group("betas", (1 - 1e-9, 0.999)), ValueError,
                                  r"^param_groups\[1\]: Invalid beta parameter at index 0: "
                                  r"0.999999999 \(1 in fp32"),
    "eps=inf": (set_group("eps", math.inf), ValueError,
                r"^param_groups\[1\]: Invalid epsilon value: inf"),
    "eps=-1e-8": (set_group("eps", -1e-8), ValueError,
                  r"^param_groups\[1\]: Invalid epsilon value: -1e-08"),
    "ema_decay=1.5": (set_group("ema_decay", 1.5), ValueError,
                      r"^param_groups\[1\]: Invalid ema_decay value: 1.5"),
    "grad reshaped": (grad_reshaped, RuntimeError,
                      r"^param_groups\[1\]\['params'\]\[0\]: the gradient has shape \[7\], "
                      r"the parameter \[2, 3\]"),
    "state dtype": (state_dtype, RuntimeError,
                    r"^param_groups\[1\]\['params'\]\[1\]: state 'exp_avg' has dtype "
                    r"torch.float64, the parameter torch.float32"),
    "state shape": (state_shape, RuntimeError,
                    r"^param_groups\[1\]\['params'\]\[0\]: state 'ema_params' has shape "
                    r"\[2, 4\], the parameter \[2, 3\]"),
    "negative step": (negative_step, ValueError, r"^param_groups\[1\].*step.*-3"),
    "sparse grad": (sparse_grad, RuntimeError,
                    r"^param_groups\[1\]\['params'\]\[0\]: AdamW does not support sparse "
                    r"gradients$"),
    "ema_every=0": (set_group("ema_every", 0), ValueError,
                    r"^param_groups\[1\]: Invalid ema_every: 0 \(an int >= 1\)$"),
    "state_dtype=fp16": (set_group("state_dtype", torch.float16), ValueError,
                         r"^param_groups\[1\]: Invalid state_dtype: torch.float16"),
    "lr tensor float64": (set_group("lr", torch.tensor([0.01], dtype=torch.float64)), ValueError,
                          r"^param_groups\[1\]: Invalid lr: a tensor lr must be a float32"),
    "lr tensor on meta": (lr_tensor_on_meta, RuntimeError,
                          r"^param_groups\[1\]\['params'\]\[0\]: the group's lr tensor is on "
                          r"meta, the parameter on cpu$"),
    "complex param": (complex_param, RuntimeError,
                      r"^param_groups\[1\]\['params'\]\[0\]: ema_adamw only support fp32, "
                      r"fp16, bf16\. \(this parameter is torch\.complex64\)$"),
    "float64 param": (float64_param, RuntimeError,
                      r"^param_groups\[1\]\['params'\]\[1\]: ema_adamw only support fp32, "
                      r"fp16, bf16\. \(this parameter is torch\.float64\)$"),
}


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("case", list(BREAKERS))
def test_failing_step_changes_nothing(rng, case, scope):
    """Group 0 is healthy and comes first: a step that updated it before failing on group 1
    (what the aclnn layer's late rejection used to do) would show in the snapshot."""
    breaker, error, pattern = BREAKERS[case]
    opt, params = three_groups(torch_seed(rng), scope)
    breaker(opt, params)
    before = snapshot(opt)
    with pytest.raises(error) as info:
        opt.step()
    assert re.search(pattern, str(info.value)), str(info.value)
    assert snapshot(opt) == before


@pytest.mark.parametrize("scope", SCOPES)
def test_bf16_param_with_an_fp16_grad_is_refused_before_any_write(rng, scope):
    """An fp16 gradient on a bf16 parameter: no launch of the list op reads that (an fp32 one
    is fine, ``grad_dtype``, see test_optim_memory_rules); the error says so in optimizer terms (not
    "varRef has dtype ACL_BF16")."""
    opt, params = three_groups(torch_seed(rng), scope, dtype=torch.bfloat16)
    set_grad(params[3], params[3].grad.half())
    before = snapshot(opt)
    with pytest.raises(RuntimeError) as info:
        opt.step()
    assert str(info.value).startswith(
        "param_groups[1]['params'][1]: the gradient has dtype torch.float16, the parameter "
        "torch.bfloat16: the kernel reads a gradient of torch.bfloat16 or torch.float32"), (
        str(info.value))
    assert "ACL" not in str(info.value)
    assert snapshot(opt) == before


def test_issue_example_inf_lr_group_is_refused_at_construction(rng):
    """The issue's example: a group with lr=inf is no longer accepted."""
    gen = torch.Generator().manual_seed(torch_seed(rng))
    a, b = (torch.nn.Parameter(torch.randn(4, generator=gen)) for _ in range(2))
    with pytest.raises(ValueError, match=r"^Invalid learning rate: inf \(not a finite"):
        FusedEmaAdamW([{"params": [a]}, {"params": [b], "lr": float("inf")}])


NONFINITE = [
    (dict(lr=math.inf), r"^Invalid learning rate: inf \(not a finite number\)$"),
    (dict(lr=1e39), r"^Invalid learning rate: 1e\+39 \(overflows fp32, the kernel's precision\)$"),
    (dict(eps=math.inf), r"^Invalid epsilon value: inf \(not a finite number\)$"),
    (dict(eps=1e39), r"^Invalid epsilon value: 1e\+39 \(overflows fp32"),
    (dict(weight_decay=math.inf), r"^Invalid weight_decay value: inf \(not a finite number\)$"),
    (dict(weight_decay=math.nan), r"^Invalid weight_decay value: nan$"),
    (dict(lr=math.nan), r"^Invalid learning rate: nan$"),
    (dict(eps=math.nan), r"^Invalid epsilon value: nan$"),
    (dict(ema_decay=math.nan), r"^Invalid ema_decay value: nan$"),
    (dict(ema_decay=math.inf), r"^Invalid ema_decay value: inf$"),
    (dict(betas=(0.9, 1 - 1e-10)), r"^Invalid beta parameter at index 1: 0.9999999999 \(1 in fp32"),
]


@pytest.mark.parametrize("kwargs, pattern", NONFINITE,
                         ids=[f"{k}={v}" for kw, _ in NONFINITE for k, v in kw.items()])
def test_constructor_and_add_param_group_refuse_nonfinite_values(kwargs, pattern):
    p, q = torch.nn.Parameter(torch.randn(2)), torch.nn.Parameter(torch.randn(2))
    with pytest.raises(ValueError, match=pattern):
        FusedEmaAdamW([p], **kwargs)
    opt = FusedEmaAdamW([p])
    with pytest.raises(ValueError, match=pattern):
        opt.add_param_group({"params": [q], **kwargs})
    assert len(opt.param_groups) == 1


def test_state_on_another_device_is_refused_in_optimizer_terms(rng):
    """A state tensor on another device than its parameter (a hand-edited or badly loaded
    state) is refused before any write, naming the group, the parameter and the key."""
    opt, params = three_groups(torch_seed(rng), "param")
    opt.state[params[4]]["exp_avg_sq"] = torch.empty(6, device="meta")
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match=r"^param_groups\[2\]\['params'\]\[0\]: state "
                                           r"'exp_avg_sq' is on meta, the parameter on cpu"):
        opt.step()
    assert snapshot(opt) == before


# ------------------------------------------------------------------------------------------
# EMA helpers that must not lose the training weights


def trained(rng, steps=3, **kwargs):
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.05, ema_decay=0.9, **kwargs)
    for batch in make_batches(seed, steps):
        backward(model, batch)
        opt.step()
    return model, opt


def test_swap_ema_refuses_a_meta_stash_before_swapping(rng):
    model, opt = trained(rng)
    weights = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ValueError, match=r"stash_device='meta'.*cannot hold"):
        with opt.swap_ema(stash_device="meta"):
            pytest.fail("the body must not run")
    assert all(torch.equal(p, w) for p, w in zip(model.parameters(), weights))
    with pytest.raises((RuntimeError, ValueError)):
        with opt.swap_ema(stash_device="no-such-device"):
            pytest.fail("the body must not run")
    assert all(torch.equal(p, w) for p, w in zip(model.parameters(), weights))


def test_swap_ema_restores_the_weights_when_the_swap_fails_half_way(rng, monkeypatch):
    """A failure while copying the EMA into the third parameter: the two already swapped get
    their training weights back before the error propagates."""
    model, opt = trained(rng)
    params = list(model.parameters())
    weights = [p.detach().clone() for p in params]
    emas = [opt.state[p]["ema_params"].clone() for p in params]
    real = optim_module._local
    calls = []

    def failing_local(t):
        if any(t is opt.state[p]["ema_params"] for p in params):
            calls.append(t)
            if len(calls) == 3:
                raise RuntimeError("injected failure")
        return real(t)

    monkeypatch.setattr(optim_module, "_local", failing_local)
    with pytest.raises(RuntimeError, match="injected failure"):
        with opt.swap_ema():
            pytest.fail("the body must not run")
    assert len(calls) == 3
    assert all(torch.equal(p, w) for p, w in zip(params, weights))
    assert all(torch.equal(opt.state[p]["ema_params"], e) for p, e in zip(params, emas))


def test_restore_without_store_is_a_clear_error(rng):
    model, opt = trained(rng, steps=1)
    with pytest.raises(RuntimeError, match=r"restore\(\) without a preceding store\(\)"):
        opt.restore()
    opt.store()
    opt.restore()
    with pytest.raises(RuntimeError, match=r"restore\(\) without a preceding store\(\)"):
        opt.restore()


class TiedLM(torch.nn.Module):
    """An embedding and an output head sharing one weight, as language models do."""

    def __init__(self, seed):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.embed = torch.nn.Embedding(11, 6)
        self.mid = torch.nn.Linear(6, 6)
        self.head = torch.nn.Linear(6, 11, bias=False)
        self.head.weight = self.embed.weight
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)

    def forward(self, tokens):
        return self.head(torch.tanh(self.mid(self.embed(tokens))))


def train_tied(model, opt, seed, steps=3):
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(steps):
        opt.zero_grad()
        tokens = torch.randint(0, 11, (8,), generator=gen)
        torch.nn.functional.cross_entropy(model(tokens), tokens).backward()
        opt.step()


def test_ema_state_dict_of_tied_weights_loads_strictly(rng):
    """Built from ``named_parameters(remove_duplicate=False)``, the optimizer knows both names
    of the tied weight: it updates the weight once per step and exports both keys, so a strict
    load works without passing the model. With the model it works for any construction."""
    seed = torch_seed(rng)
    model = TiedLM(seed)
    twin = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.named_parameters(remove_duplicate=False), lr=0.05,
                        ema_decay=0.8)
    opt_twin = FusedEmaAdamW(twin.named_parameters(), lr=0.05, ema_decay=0.8)
    train_tied(model, opt, seed)
    train_tied(twin, opt_twin, seed)
    # the tied weight is one parameter, updated once per step like the deduplicated optimizer's
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert torch.equal(p, q), name

    ema = opt.ema_state_dict()
    assert set(ema) == set(model.state_dict())
    assert ema["head.weight"] is ema["embed.weight"]
    fresh = TiedLM(seed + 5)
    fresh.load_state_dict(ema)  # strict
    assert torch.equal(fresh.head.weight, opt.state[model.embed.weight]["ema_params"])
    fresh.load_state_dict(opt_twin.ema_state_dict(twin))  # with the model: always complete
    assert torch.equal(fresh.head.weight, opt_twin.state[twin.embed.weight]["ema_params"])
