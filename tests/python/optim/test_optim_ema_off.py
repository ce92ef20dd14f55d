"""FusedEmaAdamW without an EMA (``ema_decay=None``), as a user switches it off: a fused
Adam/AdamW that equals ``torch.optim.AdamW``, allocates no EMA and launches without one; the
same bits as with an EMA for everything but the EMA (GradScaler, fused clipping, masters, 16-bit
state, group steps, ``foreach=False``, prepared launches, torch.compile); one group without an
EMA beside one with; the EMA helpers' errors; checkpoints in both directions; the ``ema_decay``
attribute set to None and back; validation that tells None from a bad value."""

import copy
import gc
import re
import types
import warnings
import weakref

import pytest
import ranks
import torch
from test_optim import (backward, make_batches, make_model, step_and_check_golden, torch_seed,
                        warmup_decay)
from test_optim_steps import EXACT, fp32_bound

import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from ascend_ema_adam import _C, distributed
from ascend_ema_adam.optim import FusedEmaAdamW

NO_EMA_KEYS = {"exp_avg", "exp_avg_sq", "step"}  # (step_scope="param")


@pytest.fixture(autouse=True)
def one_thread():
    with ranks.one_thread():  # tiny models: one thread is faster than two contending
        yield


@pytest.fixture
def launches(monkeypatch):
    """Every launch a step makes, as ``(kind, EMA tensors given)``: the list op
    (``"list"``), a prepared launch being made (``"prepared"``: its phase 2s then run without
    another record) and the single op (``"single"``, which always updates an EMA)."""
    seen = []
    real_list, real_single, real_prepared = (optim_module.apply_fused_ema_adam_list,
                                             optim_module.npu_apply_fused_ema_adamw,
                                             _C.ApplyFusedEmaAdamListLaunch)

    def list_op(grads, vars, ms, vs, ss, *args, **kwargs):
        seen.append(("list", len(ss or [])))
        return real_list(grads, vars, ms, vs, ss, *args, **kwargs)

    def single_op(grad, var, m, v, s, *args):
        seen.append(("single", 1))
        return real_single(grad, var, m, v, s, *args)

    def prepared(grads, vars, ms, vs, ss, *args):
        seen.append(("prepared", len(ss)))
        return real_prepared(grads, vars, ms, vs, ss, *args)

    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", list_op)
    monkeypatch.setattr(optim_module, "npu_apply_fused_ema_adamw", single_op)
    monkeypatch.setattr(_C, "ApplyFusedEmaAdamListLaunch", prepared)
    return seen


def stray_tensors(params, known=()):
    """Live tensors (all of them, through the garbage collector) with as many elements as one
    of the larger ``params`` whose memory is none of ``known``: what an EMA (or any other
    per-parameter buffer) would be. Called before a run, it gives what already exists (other
    tests' models, kept by dynamo's caches): pass those in ``known`` after it (held, their memory
    cannot be reused meanwhile)."""
    gc.collect()
    numels = {p.numel() for p in params if p.numel() >= 100}  # (the weights: distinct sizes)
    mine = {t.untyped_storage().data_ptr() for t in known}
    out = []
    for obj in gc.get_objects():
        # (plain tensors: fake ones that earlier compiled tests left have no memory)
        if (type(obj) in (torch.Tensor, torch.nn.Parameter) and obj.device.type == "cpu"
                and obj.numel() in numels and obj.untyped_storage().data_ptr() not in mine):
            out.append(obj)
    return out


def opt_tensors(model, opt):
    """A model's parameters and gradients and the optimizer's state tensors but the EMA."""
    out = []
    for p in model.parameters():
        out += [p] + ([p.grad] if p.grad is not None else [])
        out += [t for key, t in opt.state[p].items()
                if isinstance(t, torch.Tensor) and key != "ema_params"]
    return out


# ------------------------------------------------------------------------------------------
# Against torch.optim.AdamW, with no EMA anywhere


@pytest.mark.parametrize("foreach", [None, False], ids=["list", "per_param"])
def test_equals_torch_adamw_and_allocates_no_ema(rng, launches, foreach):
    """20 steps of FusedEmaAdamW(ema_decay=None) and torch.optim.AdamW (bias correction on, the
    same hyper-parameters, exact in fp32; foreach or the per-tensor loop) each on its own copy
    of a model: within test_optim's fp32 trajectory bound, the same steps, no EMA state, no
    tensor of a weight's size beyond the moments, and no launch given an EMA (foreach=False
    goes through the list op, one parameter per launch: the single op always updates one)."""
    seed = torch_seed(rng)
    steps = 20
    model = make_model(seed)
    ref = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.parameters(), ema_decay=None, foreach=foreach, **EXACT)
    adamw = torch.optim.AdamW(ref.parameters(), foreach=foreach is None, **EXACT)
    existing = stray_tensors(list(model.parameters()))
    for batch in make_batches(seed, steps):
        backward(model, batch)
        opt.step()
        backward(ref, batch)
        adamw.step()

    bound = fp32_bound(steps)
    for i, (p, q) in enumerate(zip(model.parameters(), ref.parameters())):
        assert set(opt.state[p]) == NO_EMA_KEYS, i
        assert float(opt.state[p]["step"]) == float(adamw.state[q]["step"]) == steps
        for name, a, b in (("param", p, q), ("exp_avg", opt.state[p]["exp_avg"],
                                              adamw.state[q]["exp_avg"]),
                           ("exp_avg_sq", opt.state[p]["exp_avg_sq"],
                            adamw.state[q]["exp_avg_sq"])):
            err = (a - b).abs().max().item()
            assert err <= bound * b.abs().max().item(), f"param {i} {name}: off by {err}"
    params = list(model.parameters())
    assert not stray_tensors(params, existing + opt_tensors(model, opt) + opt_tensors(ref, adamw))
    assert launches and all(ema == 0 for _, ema in launches)
    assert {kind for kind, _ in launches} == ({"list"} if foreach is False
                                              else {"list", "prepared"})
    if foreach is False:
        assert len(launches) == steps * len(params)  # one list launch per parameter

    # the allocation check sees an EMA where there is one
    with_ema = FusedEmaAdamW(model.parameters(), ema_decay=0.9, **EXACT)
    with_ema.step()
    strays = stray_tensors(params, existing + opt_tensors(model, opt)
                           + opt_tensors(model, with_ema) + opt_tensors(ref, adamw))
    emas = {with_ema.state[p]["ema_params"].untyped_storage().data_ptr() for p in params}
    assert strays and {t.untyped_storage().data_ptr() for t in strays} <= emas


# ------------------------------------------------------------------------------------------
# The same bits as with an EMA, for everything but the EMA


def train(seed, steps, ema_decay, dtype=torch.float32, scaler=False, **options):
    """``steps`` steps of make_model's MLP (a GradScaler: with an inf gradient at step 3);
    returns the model and the optimizer."""
    model = make_model(seed, dtype)
    opt = FusedEmaAdamW(model.parameters(), lr=0.01, ema_decay=ema_decay, **options)
    grad_scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10) if scaler else None
    for n, (x, y) in enumerate(make_batches(seed, steps, dtype)):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x).float(), y.float())
        if grad_scaler is None:
            loss.backward()
            opt.step()
        else:
            grad_scaler.scale(loss).backward()
            if n == 2:
                next(model.parameters()).grad.view(-1)[0] = float("inf")
            grad_scaler.step(opt)
            grad_scaler.update()
    return model, opt


CONFIGS = {
    "default": dict(),
    "per_param_launches": dict(foreach=False),
    "group_steps": dict(step_scope="group"),
    "bf16_fp32_state": dict(dtype=torch.bfloat16),
    "bf16_own_state": dict(dtype=torch.bfloat16, state_dtype=None),
    "fp16_masters_scaler": dict(dtype=torch.float16, master_weights=True, eps=1e-6, scaler=True),
    "scaler_clipping": dict(scaler=True, max_grad_norm=0.05),
    "clipping_amsgrad_maximize": dict(max_grad_norm=0.05, amsgrad=True, maximize=True),
    "ema_options_inert": dict(ema_every=3, ema_warmup="power", ema_update_after_step=2,
                              min_ema_decay=0.5),
}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_same_bits_as_with_an_ema_without_the_ema(rng, config):
    """Six steps (a GradScaler's third skipped) of each configuration with ``ema_decay=0.9``
    and with None: weights, moments, masters, maxima, steps and counters bit-identical (the
    EMA is an output of the update, never an input), and no ``ema_params`` without an EMA; the
    EMA options of a group without one do nothing (no ``ema_every`` clock)."""
    seed = torch_seed(rng)
    options = CONFIGS[config]
    model_a, with_ema = train(seed, 6, 0.9, **options)
    model_b, without = train(seed, 6, None, **options)
    for i, (p, q) in enumerate(zip(model_a.parameters(), model_b.parameters())):
        assert torch.equal(p, q), i
        a, b = with_ema.state[p], without.state[q]
        assert "ema_params" in a and set(b) == set(a) - {"ema_params"}, (i, sorted(b))
        for key in b:
            assert torch.equal(a[key], b[key]), (i, key)
    assert with_ema.num_updates == without.num_updates == (5 if options.get("scaler") else 6)
    if options.get("step_scope") == "group":
        assert torch.equal(with_ema.param_groups[0]["step"], without.param_groups[0]["step"])
    if "ema_every" in options:
        assert with_ema.param_groups[0]["ema_calls"] == 6
        assert without.param_groups[0]["ema_calls"] == 0


# ------------------------------------------------------------------------------------------
# A group without an EMA beside one with


def split_groups(model, decays):
    params = list(model.parameters())
    return [{"params": params[:4], "ema_decay": decays[0]},
            {"params": params[4:], "ema_decay": decays[1]}]


def test_group_without_ema_beside_a_group_with(rng, launches):
    """param_groups[1] has ema_decay=None, [0] 0.8: every weight and moment equals an
    optimizer with an EMA in both groups bit for bit, [0]'s EMA too, [1] keeps none and its
    launches carry none; swap_ema, copy_to and ema_state_dict act on [0] and leave [1]'s
    weights as they are."""
    seed = torch_seed(rng)
    model = make_model(seed)
    twin = copy.deepcopy(model)
    opt = FusedEmaAdamW(split_groups(model, (0.8, None)), lr=0.02)
    full = FusedEmaAdamW(split_groups(twin, (0.8, 0.8)), lr=0.02)
    mine = []
    for batch in make_batches(seed, 5):
        backward(model, batch)
        launches.clear()
        opt.step()
        mine.append(list(launches))
        backward(twin, batch)
        full.step()
    # (EMA tensors given per launch) through the op, then prepared, then phase 2s only
    assert mine == [[("list", 4), ("list", 0)], [("prepared", 4), ("prepared", 0)], [], [], []]
    ours, theirs = list(model.parameters()), list(twin.parameters())
    for i, (p, q) in enumerate(zip(ours, theirs)):
        assert torch.equal(p, q), i
        if i < 4:
            assert torch.equal(opt.state[p]["ema_params"], full.state[q]["ema_params"]), i
        else:
            assert set(opt.state[p]) == NO_EMA_KEYS, i

    weights = [p.detach().clone() for p in ours]
    with opt.swap_ema():
        for i, p in enumerate(ours):
            expected = opt.state[p]["ema_params"] if i < 4 else weights[i]
            assert torch.equal(p, expected), i
    assert all(torch.equal(p, w) for p, w in zip(ours, weights))

    exported = opt.ema_state_dict(model)
    names = [name for name, _ in model.named_parameters()]
    for i, (name, p) in enumerate(zip(names, ours)):
        expected = opt.state[p]["ema_params"] if i < 4 else p
        assert torch.equal(exported[name], expected), name
    fresh = make_model(seed + 1)
    fresh.load_state_dict(exported)  # (strict: every key is there)

    opt.copy_to()
    for i, (p, w) in enumerate(zip(ours, weights)):
        assert torch.equal(p, opt.state[p]["ema_params"] if i < 4 else w), i


# ------------------------------------------------------------------------------------------
# The EMA helpers refuse an optimizer without any EMA


def test_ema_helpers_refuse_an_optimizer_without_any_ema(rng):
    """Every group ema_decay=None: swap_ema, copy_to, ema_state_dict (with and without the
    model) and the distributed helpers raise a RuntimeError naming the groups, and the
    weights are untouched."""
    seed = torch_seed(rng)
    model = make_model(seed)
    named = list(model.named_parameters())
    opt = FusedEmaAdamW([{"params": named[:4]}, {"params": named[4:]}], ema_decay=None)
    for batch in make_batches(seed, 2):
        backward(model, batch)
        opt.step()
    weights = [p.detach().clone() for p in model.parameters()]
    text = ("no param group has an EMA (ema_decay=None in param_groups[0], param_groups[1]), "
            "so there are no EMA weights")
    calls = {
        "swap_ema()": lambda: opt.swap_ema().__enter__(),
        "copy_to()": opt.copy_to,
        "ema_state_dict()": lambda: opt.ema_state_dict(model),
        "ema_state_dict() ": opt.ema_state_dict,  # (named parameters, no model)
        "swap_ema() ": lambda: distributed.swap_ema(opt).__enter__(),
        "ema_state_dict()  ": lambda: distributed.gather_full_ema_state_dict(model, opt),
    }
    for what, call in calls.items():
        with pytest.raises(RuntimeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"FusedEmaAdamW.{what.strip()}: {text}"), (what, message)
        assert "optimizer.ema_decay = 0.999" in message
        assert all(torch.equal(p, w) for p, w in zip(model.parameters(), weights)), what
    # store()/restore() stash the weights, EMA or not
    opt.store()
    opt.restore()


def test_engine_glue_refuses_groups_without_an_ema(seed):
    """DeepSpeed's EMA helpers and megatron's glue read every parameter's EMA: a group without
    one is refused before anything moves (no process group needed to get the error)."""
    from ascend_ema_adam.integrations import deepspeed as ds_glue
    from ascend_ema_adam.integrations import megatron as mg_glue

    gen = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(6, generator=gen)) for _ in range(2)]
    opt = FusedEmaAdamW([{"params": params[:1]}, {"params": params[1:], "ema_decay": None}])

    class Engine:  # what the DeepSpeed helpers read of an engine before any collective
        optimizer = types.SimpleNamespace(optimizer=opt)
        module = torch.nn.Linear(2, 2)
    for call in (lambda: ds_glue.swap_ema(Engine()).__enter__(),
                 lambda: ds_glue.ema_state_dict(Engine()),
                 lambda: ds_glue.full_ema(Engine(), params[0])):
        with pytest.raises(RuntimeError, match=re.escape("param_groups [1] have no EMA "
                                                         "(ema_decay=None)")):
            call()

    pytest.importorskip("megatron.core")
    with pytest.raises(ValueError, match=re.escape("ema_decay=None (no EMA): this glue")):
        with mg_glue.substitute_adam(ema_decay=None):
            pass
    no_ema = FusedEmaAdamW(params, ema_decay=None)
    with pytest.raises(RuntimeError, match="no param group has an EMA"):
        with mg_glue.swap_ema(types.SimpleNamespace(optimizer=no_ema)):
            pass
    with pytest.raises(ValueError, match=re.escape("param_groups [1] have no EMA")):
        mg_glue._require_ema(types.SimpleNamespace(optimizer=opt))


# ------------------------------------------------------------------------------------------
# Checkpoints in both directions


def run(model, opt, batches):
    for batch in batches:
        backward(model, batch)
        opt.step()


def assert_same_training_state(model_a, opt_a, model_b, opt_b):
    """Weights, moments and steps bit-identical (not the EMA)."""
    for i, (p, q) in enumerate(zip(model_a.parameters(), model_b.parameters())):
        assert torch.equal(p, q), i
        assert set(opt_a.state[p]) - {"ema_params"} == set(opt_b.state[q]) - {"ema_params"}
        for key in NO_EMA_KEYS & set(opt_a.state[p]):
            assert torch.equal(opt_a.state[p][key], opt_b.state[q][key]), (i, key)
    for g, h in zip(opt_a.param_groups, opt_b.param_groups):
        assert ("step" in g) == ("step" in h) and ("step" not in g or torch.equal(g["step"],
                                                                                  h["step"]))
    assert opt_a.num_updates == opt_b.num_updates


@pytest.mark.parametrize("scope", ["param", "group"])
def test_checkpoint_without_ema_into_an_optimizer_with_one(rng, scope):
    """An EMA-less checkpoint (its groups say ema_decay=None) loads into an optimizer with
    ema_decay=0.9 without a warning: the decay stays 0.9 (having an EMA is a setting), the EMA
    starts as a copy of each weight, and the next step is the golden's bit for bit with the
    warm-up decay of the loaded count; weights continue as the uninterrupted EMA-less run."""
    seed = torch_seed(rng)
    batches = make_batches(seed, 9)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=None, step_scope=scope)
    run(model, opt, batches[:5])
    saved = copy.deepcopy(opt.state_dict())
    assert all("ema_params" not in st for st in saved["state"].values())
    assert saved["param_groups"][0]["ema_decay"] is None

    resumed = copy.deepcopy(model)
    opt2 = FusedEmaAdamW(resumed.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.load_state_dict(saved)
    assert opt2.ema_decay == 0.9 and opt2.num_updates == 5
    params = list(resumed.parameters())
    for p in params:
        ema = opt2.state[p]["ema_params"]
        assert torch.equal(ema, p) and ema.untyped_storage().data_ptr() != p.data_ptr()
    backward(resumed, batches[5])
    assert step_and_check_golden(opt2, params, 6, warmup_decay(0.9, 6)) == len(params)
    run(resumed, opt2, batches[6:])
    run(model, opt, batches[5:])
    assert_same_training_state(model, opt, resumed, opt2)


@pytest.mark.parametrize("scope", ["param", "group"])
def test_checkpoint_with_ema_into_an_optimizer_without_drops_it_with_a_warning(rng, scope):
    """A checkpoint with an EMA (ema_decay=0.9) loads into ema_decay=None: a UserWarning per
    group says the EMA is dropped, no ema_params is kept, ema_decay stays None, and training
    continues as the uninterrupted run with the EMA (weights, moments, steps)."""
    seed = torch_seed(rng)
    batches = make_batches(seed, 8)
    model = make_model(seed)
    opt = FusedEmaAdamW(split_groups(model, (0.9, 0.9)), lr=0.02, step_scope=scope)
    run(model, opt, batches[:4])
    saved = copy.deepcopy(opt.state_dict())

    resumed = copy.deepcopy(model)
    opt2 = FusedEmaAdamW(split_groups(resumed, (None, None)), lr=0.02, step_scope=scope)
    with pytest.warns(UserWarning) as record:
        opt2.load_state_dict(saved)
    messages = [str(w.message) for w in record]
    for i, count in ((0, 4), (1, 2)):
        assert (f"FusedEmaAdamW: param_groups[{i}] has no EMA (ema_decay=None), so the "
                f"checkpoint's EMA ('ema_params') of its {count} parameter(s) is dropped"
                in " | ".join(messages)), messages
    assert opt2.ema_decay is None and all(g["ema_decay"] is None for g in opt2.param_groups)
    assert all("ema_params" not in opt2.state[p] for p in resumed.parameters())
    run(resumed, opt2, batches[4:])
    run(model, opt, batches[4:])
    assert_same_training_state(model, opt, resumed, opt2)
    assert all("ema_params" not in opt2.state[p] for p in resumed.parameters())


def test_checkpoint_round_trip_without_ema(rng):
    """EMA-less to EMA-less resumes bit for bit without a warning; a torch.optim.AdamW
    checkpoint into an EMA-less optimizer makes no EMA either."""
    seed = torch_seed(rng)
    batches = make_batches(seed, 8)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=None)
    run(model, opt, batches[:3])
    resumed = copy.deepcopy(model)
    opt2 = FusedEmaAdamW(resumed.parameters(), lr=0.02, ema_decay=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    run(resumed, opt2, batches[3:])
    run(model, opt, batches[3:])
    assert_same_training_state(model, opt, resumed, opt2)
    assert all(set(opt2.state[p]) == NO_EMA_KEYS for p in resumed.parameters())

    adamw = torch.optim.AdamW(model.parameters(), **EXACT)
    run(model, adamw, batches[:2])
    opt3 = FusedEmaAdamW(copy.deepcopy(model).parameters(), ema_decay=None, **EXACT)
    opt3.load_state_dict(copy.deepcopy(adamw.state_dict()))
    assert all(set(st) == NO_EMA_KEYS for st in opt3.state.values())


def test_checkpoint_without_decays_keeps_each_groups_choice(rng):
    """A dict whose groups have no ema_decay key (MindSpeed's) loads with each group's own
    choice, whatever the constructor's default: [0] keeps its decay 0.7 and the checkpoint's
    EMA, [1] (None) drops the EMA with the warning."""
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(split_groups(model, (0.9, 0.9)), lr=0.02)
    run(model, opt, make_batches(seed, 2))
    saved = copy.deepcopy(opt.state_dict())
    for group in saved["param_groups"]:
        del group["ema_decay"]
    resumed = copy.deepcopy(model)
    opt2 = FusedEmaAdamW(split_groups(resumed, (0.7, None)), lr=0.02, ema_decay=None)
    with pytest.warns(UserWarning, match=re.escape("param_groups[1] has no EMA")):
        opt2.load_state_dict(saved)
    assert [g["ema_decay"] for g in opt2.param_groups] == [0.7, None]
    params, theirs = list(resumed.parameters()), list(model.parameters())
    for p, q in zip(params[:4], theirs[:4]):
        assert torch.equal(opt2.state[p]["ema_params"], opt.state[q]["ema_params"])
    assert all("ema_params" not in opt2.state[p] for p in params[4:])


# ------------------------------------------------------------------------------------------
# Prepared (phase-2-only) launches, torch.compile


def test_prepared_launches_without_ema(rng, launches, monkeypatch):
    """A cached EMA-less group launches through one prepared launch made without an EMA list,
    run again (phase 2 only) on every later step, bit for bit the op launched every step;
    ema_every does nothing there (no second launch kind)."""
    seed = torch_seed(rng)
    batches = make_batches(seed, 8)
    model = make_model(seed)
    twin = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=None, ema_every=2)
    through_op = FusedEmaAdamW(twin.parameters(), lr=0.02, ema_decay=None, ema_every=2)
    mine = []
    for batch in batches:
        backward(model, batch)
        launches.clear()
        opt.step()
        mine.append(list(launches))
        backward(twin, batch)
        monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)
        launches.clear()
        through_op.step()
        assert launches == [("list", 0)]
        monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", True)
    assert_same_training_state(model, opt, twin, through_op)
    # step 1 checks in full and launches through the op; step 2 prepares (no EMA list); the
    # later steps run it again
    assert mine == [[("list", 0)], [("prepared", 0)]] + [[]] * (len(batches) - 2)


def test_compiled_step_without_ema_is_bit_identical(rng):
    """torch.compile(opt.step, fullgraph=True) of an EMA-less optimizer (ema_every=2, which
    with an EMA runs outside the graph, is inert here): eager's bits, no EMA state, at most
    two graphs (state creation, then the update). (aot_eager: what is tested is the tracing;
    test_optim_compile runs inductor.)"""
    seed = torch_seed(rng)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    try:
        eager_model = make_model(seed)
        compiled_model = copy.deepcopy(eager_model)
        kwargs = dict(lr=0.02, ema_decay=None, ema_every=2)
        eager = FusedEmaAdamW(eager_model.parameters(), **kwargs)
        compiled = FusedEmaAdamW(compiled_model.parameters(), **kwargs)
        step = torch.compile(compiled.step, fullgraph=True, backend="aot_eager")
        for n in range(4):
            gen = torch.Generator().manual_seed(seed + n)
            for p, q in zip(eager_model.parameters(), compiled_model.parameters()):
                p.grad = torch.randn(p.shape, generator=gen)
                q.grad = p.grad.clone()
            eager.step()
            step()
        assert_same_training_state(eager_model, eager, compiled_model, compiled)
        assert all(set(compiled.state[p]) == NO_EMA_KEYS for p in compiled_model.parameters())
        assert compiled.num_updates == eager.num_updates == 4
        assert torch._dynamo.utils.counters["stats"]["unique_graphs"] <= 2
    finally:
        torch._dynamo.reset()


# ------------------------------------------------------------------------------------------
# Switching the EMA off and on; validation


def test_ema_decay_attribute_set_to_none_and_back(rng, launches):
    """``optimizer.ema_decay = None`` drops every EMA at once and later steps launch without
    one (weights as a never-EMA run's, bit for bit); set to 0.8 again, a new EMA starts from
    the weights at the next step (the golden's bits, the warm-up counter not reset). A group's
    ``ema_decay`` set to None directly, after cached steps, drops its EMA at the next step.
    Bad values raise and change nothing."""
    seed = torch_seed(rng)
    batches = make_batches(seed, 12)
    model = make_model(seed)
    twin = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9)
    never = FusedEmaAdamW(twin.parameters(), lr=0.02, ema_decay=None)
    params = list(model.parameters())

    def both(batch):
        backward(model, batch)
        opt.step()
        backward(twin, batch)
        never.step()

    for batch in batches[:3]:  # (cached: prepared launches hold the EMA tensors too)
        both(batch)
    emas = [weakref.ref(opt.state[p]["ema_params"]) for p in params]
    opt.ema_decay = None
    assert opt.defaults["ema_decay"] is None and opt.param_groups[0]["ema_decay"] is None
    assert all(set(opt.state[p]) == NO_EMA_KEYS for p in params)
    gc.collect()
    assert all(ema() is None for ema in emas)  # freed at once
    launches.clear()
    for batch in batches[3:6]:
        both(batch)
    assert all(ema == 0 for _, ema in launches)
    assert_same_training_state(model, opt, twin, never)
    assert all(set(opt.state[p]) == NO_EMA_KEYS for p in params)

    for bad, error, text in (("0.9", TypeError, "ema_decay must be a number (or None: no EMA), "
                                                "got str '0.9'"),
                             (1.5, ValueError, "Invalid ema_decay value: 1.5")):
        with pytest.raises(error) as info:
            opt.ema_decay = bad
        assert str(info.value) == text
        assert opt.ema_decay is None and opt.defaults["ema_decay"] is None

    opt.ema_decay = 0.8
    assert opt.ema_decay == 0.8 and opt.num_updates == 6
    backward(model, batches[6])
    assert step_and_check_golden(opt, params, 7, warmup_decay(0.8, 7)) == len(params)
    for batch in batches[7:10]:
        backward(model, batch)
        opt.step()  # (cached again: phase 2 only)
    assert all("ema_params" in opt.state[p] for p in params)

    launches.clear()
    opt.param_groups[0]["ema_decay"] = None
    backward(model, batches[10])
    opt.step()
    assert all(set(opt.state[p]) == NO_EMA_KEYS for p in params)
    assert launches and all(ema == 0 for _, ema in launches)


def test_none_is_not_a_bad_value(rng):
    """ema_decay=None is accepted by the constructor, per group and by add_param_group, and
    never reported as a bad decay; bad values keep their errors, the other checks still run
    (the EMA options are validated in a group without an EMA too, so switching it on later
    cannot meet a bad one), and a failing step of a group set to a bad decay changes
    nothing."""
    gen = torch.Generator().manual_seed(torch_seed(rng))
    a, b, c = (torch.nn.Parameter(torch.randn(5, generator=gen)) for _ in range(3))
    opt = FusedEmaAdamW([{"params": [a]}, {"params": [b], "ema_decay": None}])
    opt.add_param_group({"params": [c], "ema_decay": None})
    assert [g["ema_decay"] for g in opt.param_groups] == [0.9999, None, None]
    cases = [
        (dict(ema_decay="0.9"), TypeError, "ema_decay must be a number (or None: no EMA), got "
                                           "str '0.9'"),
        (dict(ema_decay=1.5), ValueError, "Invalid ema_decay value: 1.5"),
        (dict(ema_decay=None, lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (dict(ema_decay=None, ema_every=0), ValueError, "Invalid ema_every: 0 (an int >= 1)"),
        (dict(ema_decay=None, min_ema_decay=2.0), ValueError,
         "Invalid min_ema_decay: 2.0 (a number in [0, 1])"),
    ]
    for kwargs, error, text in cases:
        with pytest.raises(error) as info:
            FusedEmaAdamW([torch.nn.Parameter(torch.randn(2))], **kwargs)
        assert str(info.value) == text, kwargs
    with pytest.raises(ValueError, match=re.escape("Invalid ema_every: 0")):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.randn(2))], "ema_decay": None,
                             "ema_every": 0})
    assert len(opt.param_groups) == 3

    for p in (a, b, c):
        p.grad = torch.randn(5, generator=gen)
    opt.step()
    before = [t.detach().clone() for t in (a, b, c)]
    opt.param_groups[1]["ema_decay"] = "none"
    with pytest.raises(TypeError) as info:
        opt.step()
    assert str(info.value) == ("param_groups[1]: ema_decay must be a number (or None: no EMA), "
                               "got str 'none'")
    assert all(torch.equal(t, s) for t, s in zip((a, b, c), before))
    assert opt.num_updates == 1
    opt.param_groups[1]["ema_decay"] = None
    opt.step()
    assert set(opt.state[b]) == NO_EMA_KEYS and "ema_params" in opt.state[a]
