"""FusedEmaAdamW as DeepSpeed's offloaded ZeRO optimizer (``ascend_ema_adam.integrations.
deepspeed``, DeepSpeed 0.19.8) on two gloo ranks (spawned processes, accelerator ``cpu``).

One spawn runs ZeRO-2 and ZeRO-3 (several sub-groups: a small ``sub_group_size``), each with
per-parameter and per-group steps, fp32 and (ZeRO-3, group steps) a bf16 model with fp32
partitions, and two of them again with 8-bit moments (``state_bits=8``), the optimizer
offloaded to the CPU, on a small MLP with two param groups; each rank
trains on its own batches. After every engine step the ranks record
the full fp32 weights (``safe_get_full_fp32_param``), the full EMA (``safe_get_full_optimizer_
state(param, "ema_params")``) and the counters; the tests below check them here:

* the EMA equals one recomputed from the fp32 weights with the warm-up decay of the engine step
  (a counter that ran ahead would change the decay);
* ``num_updates``, the group steps and the per-partition steps equal the engine steps, while
  DeepSpeed calls ``step()`` more than once per engine step (ZeRO-3: per sub-group);
* ``save_checkpoint`` -> ``load_checkpoint`` into a fresh engine -> continue equals the
  uninterrupted run bit for bit (weights, EMA, counters), with an EMA swap in the middle of the
  uninterrupted run;
* the EMA export and the EMA swap (ZeRO-3: sharded and persistent parameters).

Test-only settings, made by the workers themselves: ``DS_ACCELERATOR=cpu`` (DeepSpeed would find
the CPU by itself, with a warning), and DeepSpeed's shared-memory all-reduce kernel marked as
not compatible, so gloo does the collectives instead of a kernel JIT-compiled (a minute on two
cores) at the first ``init_distributed``.
"""

import copy
import datetime
import importlib.util
import logging
import os
import warnings

import pytest
import torch
from ranks import one_thread, recording_errors, save_results, spawn_job, tanh_mlp

# DeepSpeed is imported by the ranks only, so this process (the whole test session) never loads
# it. Not installed: a skip that says so, or a failure under make test (AEA_REQUIRE_ENGINES: it
# installed it); installed but broken: the ranks fail, loudly.
if importlib.util.find_spec("deepspeed") is None:
    if os.environ.get("AEA_REQUIRE_ENGINES"):
        raise ImportError("deepspeed is not installed, but make test installs it (AEA_REQUIRE_ENGINES)")
    pytest.skip("deepspeed is not installed; `make test` installs it (pip install "
                "--no-build-isolation '.[deepspeed]')", allow_module_level=True)

from ascend_ema_adam.integrations import deepspeed as integration  # noqa: E402
from ascend_ema_adam.optim import FusedEmaAdamW  # noqa: E402

WORLD = 2
K, M = 4, 3            # engine steps before the checkpoint, steps after it
SWAP_AT = K + 1        # the uninterrupted run swaps the EMA in and out after this step
TIMEOUT_S = 240        # the whole spawn; a hang fails the tests instead of blocking the suite
EMA_DECAY = 0.999      # above the warm-up's (1 + n) / (10 + n) for these steps: n decides
BATCH = 8
SUB_GROUP = 160        # ZeRO-3 sub-groups of <= 160 elements: several per param group
PERSIST = 30           # ZeRO-3 keeps parameters below 30 elements whole (the biases)
SCENARIOS = [(stage, scope, "fp32", 32) for stage in (2, 3) for scope in ("param", "group")]
SCENARIOS += [(3, "group", "bf16", 32), (2, "param", "fp32", 8), (3, "group", "bf16", 8)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
NAMES = [f"zero{stage}-{scope}-{dtype}" + ("-8bit" if bits == 8 else "")
         for stage, scope, dtype, bits in SCENARIOS]


def make_model(seed):
    return tanh_mlp(seed, (10, 24, 17, 3), 0.3)


def make_optimizer(model, scope, bits):
    """``bits`` 8: every fp32 partition keeps 8-bit moments (min_8bit_size=0: they are small)."""
    weights = [p for n, p in model.named_parameters() if n.endswith("weight")]
    biases = [p for n, p in model.named_parameters() if n.endswith("bias")]
    return FusedEmaAdamW([{"params": weights},
                          {"params": biases, "lr": 0.01, "weight_decay": 0.0}],
                         lr=0.02, weight_decay=0.05, ema_decay=EMA_DECAY, step_scope=scope,
                         state_bits=bits, min_8bit_size=0)


def ds_config(stage, dtype):
    zero = {"stage": stage}  # deepspeed_config adds the CPU offload
    if stage == 3:
        zero.update(sub_group_size=SUB_GROUP, stage3_param_persistence_threshold=PERSIST)
    return integration.deepspeed_config({"train_micro_batch_size_per_gpu": BATCH,
                                         "steps_per_print": 10**9, "zero_optimization": zero,
                                         "bf16": {"enabled": dtype == "bf16"}})


def make_batches(seed, rank, steps, dtype):
    """Each rank its own batches: the data-parallel average is a real one."""
    gen = torch.Generator().manual_seed(seed + 1000 * (rank + 1))
    return [(torch.randn(BATCH, 10, generator=gen).to(DTYPES[dtype]),
             torch.randn(BATCH, 3, generator=gen).to(DTYPES[dtype])) for _ in range(steps)]


# ------------------------------------------------------------------------------------------
# The ranks


def train_step(engine, batch):
    x, y = batch
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()


def full_model(engine):
    """The model's weights as every rank sees them (ZeRO-3: gathered)."""
    import deepspeed

    params = list(engine.module.parameters())
    with deepspeed.zero.GatheredParameters(params, enabled=hasattr(params[0], "ds_id")):
        return {n: p.detach().clone() for n, p in engine.module.named_parameters()}


def counters(opt, scope):
    """num_updates, and the steps: each group's, or each fp32 partition's."""
    if scope == "group":
        steps = [g["step"].item() for g in opt.param_groups]
    else:
        steps = sorted({float(st["step"]) for st in opt.state.values()})
    return opt.num_updates, steps


def record(engine, opt, scope):
    from deepspeed.utils import safe_get_full_fp32_param

    params = dict(engine.module.named_parameters())
    return {"fp32": {n: safe_get_full_fp32_param(p).clone() for n, p in params.items()},
            "ema": {n: integration.full_ema(engine, p).clone() for n, p in params.items()},
            "counters": counters(opt, scope)}


def scenario(rank, seed, out_dir, stage, scope, dtype, bits):
    res = {"steps": []}
    batches = make_batches(seed, rank, K + M, dtype)
    model = make_model(seed)
    opt = make_optimizer(model, scope, bits)
    engine, *_ = integration.initialize(model, opt, ds_config(stage, dtype))
    assert integration.attach(engine) is opt  # idempotent: one wrapper, the same optimizer
    assert engine.optimizer.step._fused_ema_adamw is opt
    calls = []
    inner_step = opt.step
    opt.step = lambda *a, **k: (calls.append(1), inner_step(*a, **k))[1]
    res["sub_groups"] = len(getattr(engine.optimizer, "fp16_groups", []))
    try:
        integration.full_ema(engine, next(model.parameters()))
    except RuntimeError as e:
        res["before_first_step"] = str(e)
    checkpoint = os.path.join(out_dir, f"ckpt_{stage}_{scope}_{dtype}_{bits}")
    for k, batch in enumerate(batches, start=1):
        train_step(engine, batch)
        res["steps"].append(record(engine, opt, scope))
        if k == K:
            engine.save_checkpoint(checkpoint, tag="k")
        if k == SWAP_AT:
            res["swap"] = swap_checks(engine, seed, DTYPES[dtype])
    res["calls_per_engine_step"] = len(calls) / len(batches)
    res["state_keys"] = sorted({k for st in opt.state.values() for k in st})
    res["final_model"] = full_model(engine)
    res["ema_state_dict"] = integration.ema_state_dict(engine)
    res["ema_rank0_only"] = integration.ema_state_dict(engine, rank0_only=True)

    # a fresh engine (other initial weights) resumes from the checkpoint
    model2 = make_model(seed + 99)
    opt2 = make_optimizer(model2, scope, bits)
    engine2, *_ = integration.initialize(model2, opt2, ds_config(stage, dtype))
    engine2.load_checkpoint(checkpoint, tag="k")
    res["loaded_ema"] = {n: integration.full_ema(engine2, p).clone()
                         for n, p in model2.named_parameters()}
    res["loaded_counters"] = counters(opt2, scope)
    for batch in batches[K:]:
        train_step(engine2, batch)
    res["resumed"] = record(engine2, opt2, scope)
    res["resumed_model"] = full_model(engine2)
    return res


def swap_checks(engine, seed, dtype):
    """The EMA swap: the model inside (gathered, and its forward), the model after."""
    out = {"before": full_model(engine)}
    x = torch.randn(5, 10, generator=torch.Generator().manual_seed(seed + 7)).to(dtype)
    out["ema"] = integration.ema_state_dict(engine)
    with torch.no_grad(), integration.swap_ema(engine):
        out["inside"] = full_model(engine)
        out["inside_forward"] = engine(x)
    out["x"] = x
    out["after"] = full_model(engine)
    try:
        with integration.swap_ema(engine):
            raise KeyError("inside")
    except KeyError:
        out["after_raise"] = full_model(engine)
    try:  # refused on every rank before anything moves
        with integration.swap_ema(engine, stash_device="meta"):
            pass
    except ValueError:
        out["after_meta"] = full_model(engine)
    return out


def worker(rank, port, seed, out_dir):
    os.environ.update(DS_ACCELERATOR="cpu", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD),
                      LOCAL_SIZE=str(WORLD))
    torch.set_num_threads(1)  # identical CPU kernels (and summation orders) in every run
    try:
        with recording_errors(rank, out_dir):
            import deepspeed as ds

            logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
            # gloo's all-reduce rather than DeepSpeed's JIT-built shared-memory kernel
            ds.ops.__compatible_ops__["deepspeed_shm_comm"] = False
            ds.init_distributed(dist_backend="gloo", timeout=datetime.timedelta(seconds=90))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results = {name: scenario(rank, seed, out_dir, *spec)
                           for name, spec in zip(NAMES, SCENARIOS)}
            # FusedEmaAdamW's warning for ZeRO-3 partitions stepped outside partial_steps()
            results["unattached_steps"] = [str(w.message) for w in caught
                                           if "outside partial_steps" in str(w.message)]
            save_results(rank, out_dir, results)
    finally:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()


@pytest.fixture(scope="module")
def spawned(tmp_path_factory, new_seed):
    return spawn_job("deepspeed", worker, WORLD, TIMEOUT_S, tmp_path_factory, new_seed)


@pytest.fixture(params=SCENARIOS, ids=NAMES)
def runs(request, spawned):
    """One scenario's results: (name, (stage, scope, dtype, bits), seed, each rank's results)."""
    seed, ranks = spawned
    name = NAMES[SCENARIOS.index(request.param)]
    return name, request.param, seed, [r[name] for r in ranks]


def assert_same(actual, expected, what):
    assert list(actual) == list(expected), what
    for name in expected:
        a, e = actual[name], expected[name]
        assert a.dtype == e.dtype and torch.equal(a, e), f"{what}: {name} differs"


# ------------------------------------------------------------------------------------------
# The tests


def test_ema_follows_the_fp32_weights_with_the_engine_steps_decay(runs):
    """EMA_k = d_k EMA_{k-1} + (1 - d_k) W_k from the full fp32 weights after each engine step,
    d_k = min(ema_decay, (1 + k)/(10 + k)) at engine step k, starting from the initial
    weights; the fused kernel computes it in fp32 (so: to 1e-6)."""
    name, (_, _, dtype, _), seed, ranks = runs
    dtype = DTYPES[dtype]
    # DeepSpeed's fp32 partitions start as the model's weights in its dtype
    initial = {n: p.detach().to(dtype).float() for n, p in make_model(seed).named_parameters()}
    for rank, res in enumerate(ranks):
        ema = {n: p.detach().double() for n, p in initial.items()}
        for k, step in enumerate(res["steps"], start=1):
            d = min(EMA_DECAY, (1 + k) / (10 + k))
            for n in ema:
                ema[n] = d * ema[n] + (1 - d) * step["fp32"][n].double()
                err = (step["ema"][n].double() - ema[n]).abs().max().item()
                assert err <= 1e-6, f"{name} rank {rank} step {k} {n}: {err:.2e} (seed {seed})"
        # the weights moved, and the EMA is not the weights
        last = res["steps"][-1]
        assert all(not torch.equal(last["fp32"][n], initial[n]) for n in initial)
        assert all(not torch.equal(last["ema"][n], last["fp32"][n]) for n in initial)


def test_every_step_call_is_inside_an_engine_step_block(spawned):
    """attach() puts every step() DeepSpeed makes inside partial_steps(): the optimizer never
    saw a ZeRO-3 partition outside one (it warns when it does)."""
    _, ranks = spawned
    assert [r["unattached_steps"] for r in ranks] == [[], []]


def test_counters_equal_the_engine_steps(runs):
    name, (stage, scope, _, _), seed, ranks = runs
    for rank, res in enumerate(ranks):
        if stage == 3:
            # DeepSpeed steps each sub-group separately: what made the counters run ahead
            assert res["sub_groups"] >= 3 and res["calls_per_engine_step"] == res["sub_groups"]
        else:  # ZeRO-2: one step() per param group
            assert res["calls_per_engine_step"] == 2
        for k, step in enumerate(res["steps"], start=1):
            n, steps = step["counters"]
            assert n == k and steps == ([k, k] if scope == "group" else [k]), (
                name, rank, k, step["counters"])


def test_checkpoint_resume_is_bit_identical(runs):
    name, _, seed, ranks = runs
    for rank, res in enumerate(ranks):
        what = f"{name} rank {rank} (seed {seed})"
        final = res["steps"][-1]
        assert_same(res["resumed"]["fp32"], final["fp32"], f"{what} fp32 weights")
        assert_same(res["resumed"]["ema"], final["ema"], f"{what} EMA")
        assert res["resumed"]["counters"] == final["counters"], what
        assert_same(res["resumed_model"], res["final_model"], f"{what} model weights")
        # right after the load (no step yet): the checkpoint's EMA and counters
        assert_same(res["loaded_ema"], res["steps"][K - 1]["ema"], f"{what} loaded EMA")
        assert res["loaded_counters"] == res["steps"][K - 1]["counters"], what
        assert "no EMA yet" in res["before_first_step"]


def test_state_kind_is_the_groups(runs):
    """The offloaded partitions keep 8-bit moments (codes and block scales) where the groups say
    state_bits=8, fp32 moments otherwise: the 8-bit runs above are 8-bit."""
    name, (_, _, _, bits), _, ranks = runs
    moments = ({"exp_avg_codes", "exp_avg_sq_codes", "exp_avg_absmax", "exp_avg_sq_absmax"}
               if bits == 8 else {"exp_avg", "exp_avg_sq"})
    for rank, res in enumerate(ranks):
        assert moments <= set(res["state_keys"]), (name, rank, res["state_keys"])
        assert {"exp_avg_codes", "exp_avg"} & set(res["state_keys"]) == moments & {
            "exp_avg_codes", "exp_avg"}, (name, rank)


def in_dtype(tensors, dtype):
    return {n: t.to(dtype) for n, t in tensors.items()}


def test_ema_state_dict_and_swap(runs):
    """The export has the model's keys and dtype (a bf16 model: the fp32 EMA rounded); inside
    the swap the model holds it and computes with it; after, its own weights."""
    name, (_, _, dtype, _), seed, ranks = runs
    dtype = DTYPES[dtype]
    for rank, res in enumerate(ranks):
        what = f"{name} rank {rank} (seed {seed})"
        final = in_dtype(res["steps"][-1]["ema"], dtype)
        exported = res["ema_state_dict"]
        assert list(exported) == list(make_model(0).state_dict())
        assert_same(exported, final, f"{what} exported EMA")
        assert all(t.device.type == "cpu" for t in exported.values())
        if rank == 0:
            assert_same(res["ema_rank0_only"], final, f"{what} rank0_only")
        else:
            assert res["ema_rank0_only"] == {}
        swap = res["swap"]
        assert_same(swap["ema"], in_dtype(res["steps"][SWAP_AT - 1]["ema"], dtype),
                    f"{what} EMA at the swap")
        assert_same(swap["inside"], swap["ema"], f"{what} inside swap_ema")
        assert all(not torch.equal(swap["inside"][n], swap["before"][n]) for n in swap["before"])
        for key in ("after", "after_raise", "after_meta"):
            assert_same(swap[key], swap["before"], f"{what} {key}")
        reference = make_model(0).to(dtype)
        reference.load_state_dict(swap["ema"])
        with one_thread(), torch.no_grad():  # as the ranks: the same summation order
            expected = reference(swap["x"])
        assert torch.equal(swap["inside_forward"], expected), what
        # the swap in the uninterrupted run changed nothing: the resumed run (no swap) equals it
        # bit for bit (test_checkpoint_resume_is_bit_identical)


def test_deepspeed_config_merges_and_refuses_contradictions():
    base = {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True},
            "zero_optimization": {"stage": 3, "offload_optimizer": {"pin_memory": True}}}
    frozen = copy.deepcopy(base)
    config = integration.deepspeed_config(base)
    assert base == frozen  # not modified
    assert config["zero_force_ds_cpu_optimizer"] is False
    assert config["zero_allow_untested_optimizer"] is True
    assert config["zero_optimization"] == {"stage": 3, "offload_optimizer": {
        "pin_memory": True, "device": "cpu"}}
    assert config["bf16"] == {"enabled": True} and config["train_micro_batch_size_per_gpu"] == 4
    assert integration.deepspeed_config(stage=2)["zero_optimization"] == {
        "stage": 2, "offload_optimizer": {"device": "cpu"}}
    assert "offload_optimizer" not in integration.deepspeed_config(
        stage=0, offload=None)["zero_optimization"]
    refused = [
        (dict(base={"optimizer": {"type": "AdamW"}}, stage=2), ValueError, "'optimizer' section"),
        (dict(base={"zero_force_ds_cpu_optimizer": True}, stage=2), ValueError,
         "zero_force_ds_cpu_optimizer=True"),
        (dict(base={"zero_optimization": {"stage": 2}}, stage=3), ValueError,
         "stage=3 but the config says"),
        (dict(base={}), ValueError, "needs ZeRO stage 1, 2 or 3"),
        (dict(stage=2, offload="nvme"), ValueError, "offload='nvme'"),
        (dict(base={"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"}}}),
         ValueError, "device is 'none'"),
        (dict(stage=4), ValueError, "stage=4"),
        (dict(base="ds_config.json"), TypeError, "must be a dict"),
    ]
    for kwargs, error, text in refused:
        with pytest.raises(error, match=text):
            integration.deepspeed_config(**kwargs)


def test_initialize_and_attach_refuse_what_cannot_work():
    """Refused before DeepSpeed is touched: no process group is needed to get the error."""
    model = make_model(0)
    with pytest.raises(TypeError, match="must be a FusedEmaAdamW"):
        integration.initialize(model, torch.optim.AdamW(model.parameters()), stage=2)
    opt = FusedEmaAdamW(model.parameters(), max_grad_norm=1.0)
    with pytest.raises(ValueError, match="gradient_clipping"):
        integration.initialize(model, opt, stage=2)

    class Engine:  # what attach reads of an engine
        optimizer = type("Wrapper", (), {"optimizer": opt, "step": lambda self: None})()
    with pytest.raises(ValueError, match="gradient_clipping"):
        integration.attach(Engine())
    assert "_fused_ema_adamw" not in vars(Engine.optimizer)  # not wrapped
    with pytest.raises(TypeError, match="no FusedEmaAdamW inside"):
        integration.local_optimizer(type("E", (), {"optimizer": torch.optim.SGD(
            model.parameters(), lr=0.1)})())
