"""FusedEmaAdamW as megatron-core 0.12.1's DistributedOptimizer's inner optimizer
(``ascend_ema_adam.integrations.megatron``) on two gloo ranks, against one FusedEmaAdamW in
this process.

The ranks train a bf16 MegatronModule under megatron's DistributedDataParallel (grads reduced
in fp32, small buckets: several buckets, parameters split between the ranks) with
``OptimizerParamScheduler`` (lr warm-up and decay, weight decay ramp; the biases in their own
no-decay group), each rank on its own batches. The test wraps each rank's inner
FusedEmaAdamW's ``step`` to record what it is handed: each group's lr and weight decay, and
each fp32 main-parameter shard's gradient (after megatron's reduce-scatter and clipping).

The reference: one FusedEmaAdamW over the full, flattened fp32 parameters (the bf16 init,
widened, as megatron's main parameters start), in megatron's groups, stepped with the same
gradients (the ranks' shards put together) and hyper-parameters. The kernel is elementwise:
each element's update reads only its own parameter, gradient, moments and EMA and the
step's scalars (step, lr, betas, eps, weight decay, EMA decay), which sharding does not
change, so the sharded run must equal the reference bit for bit: main parameters, both
moments and the EMA of every shard, and the bf16 model parameters after megatron's copy and
all-gather (fp32 rounded to nearest even, as the reference's ``.to(bfloat16)``).

megatron-core 0.12.1 checkpoints differently with and without apex / Transformer Engine
(``distrib_optimizer.HAVE_APEX_OR_TE``): without them (this machine) its ``state_dict()``
keeps torch AdamW's per-parameter steps; with them (MindSpeed on Ascend, where apex is
present) only the param groups. Every scenario runs in both branches (the flag set in the
ranks), with the step scope the glue picks for each.

CPU shims, in the ranks only (megatron-core assumes CUDA; MindSpeed makes the same
adaptations for NPU):

1. ``torch.Tensor.type()`` reads ``torch.cuda.<T>Tensor`` for CPU tensors: the
   DistributedOptimizer sorts parameters by ``param.type()`` against
   ``'torch.cuda.BFloat16Tensor'`` etc. (MindSpeed's ``type_wrapper`` renames ``torch.npu.*``
   the same way).
2. ``torch.cuda.current_device()`` returns ``"cpu"``: the grad/param buffers and the loading
   state are allocated on it.
3. ``device='cuda'`` becomes ``'cpu'`` (a TorchFunctionMode): the optimizer's scalar tensors
   (``_scale_one``, clipping's norm) are made with an explicit ``device='cuda'``.
4. ``quantize_param_shard`` is a no-op: without Transformer Engine megatron's version raises,
   even with no fp8 parameter to quantize (it is called on every main-to-model copy).

Not run here: megatron-core 0.12.1's distributed-checkpoint file I/O. Its ``torch_dist``
writer calls torch's private ``_write_item`` with the argument list of older torch (2.13 added
one) and uses ``np.product`` (gone in numpy 2), and it calls ``torch.cuda.synchronize``. The
optimizer side of ``sharded_state_dict`` (both the ``fully_sharded_model_space`` and the
``dp_zero_gather_scatter`` formats) is tested with the checkpoint round trip done in memory
(each sharded object replaced by its data, which is what the loader hands back to the same
ranks), in the apex branch: without apex, 0.12.1 cannot make the loading template of a
fresh DistributedOptimizer (its ``state_dict()`` asserts one step over an empty state, for
torch's AdamW too).
"""

import contextlib
import copy
import datetime
import os
import warnings

import pytest
import torch
import torch.distributed as dist
from ranks import one_thread, recording_errors, save_results, spawn_job

if os.environ.get("AEA_REQUIRE_ENGINES"):  # make test installed it: missing fails, never skips
    import megatron.core  # noqa: F401
else:
    pytest.importorskip("megatron.core", reason="megatron-core is not installed: pip install "
                        "--no-deps megatron-core==0.12.1 (make test installs it)")

from ascend_ema_adam.optim import FusedEmaAdamW  # noqa: E402

# (expected here: the tests run megatron's torch fallbacks)
pytestmark = pytest.mark.filterwarnings(
    "ignore:Transformer Engine and Apex are not installed:UserWarning")

WORLD = 2
K, M = 4, 4             # steps before the checkpoint, steps after it
BATCH = 6
SIZES = (13, 37, 23, 5)  # an MLP: 3 weights and 3 biases, 1,542 elements
BUCKET = 400            # elements per DDP bucket: several buckets
LR, MIN_LR, WD0, WD1 = 2e-2, 2e-3, 0.02, 0.1
BETAS, EPS, CLIP = (0.8, 0.95), 1e-6, 0.5
EMA = dict(ema_decay=0.8)  # below the warm-up's (1+n)/(10+n) after 8 steps: both decide
TIMEOUT_S = 240
MODES = {"no apex": False, "apex": True}  # distrib_optimizer.HAVE_APEX_OR_TE


# ------------------------------------------------------------------------------------------
# The ranks


@contextlib.contextmanager
def cpu_shims():
    """The four CPU shims of the module docstring (in a spawned rank; undone on exit)."""
    from torch.overrides import TorchFunctionMode
    from megatron.core.optimizer import distrib_optimizer

    tensor_type = torch.Tensor.type

    def cuda_type(self, *args, **kwargs):
        name = tensor_type(self, *args, **kwargs)
        if args or kwargs or not name.startswith("torch.") or name.startswith("torch.cuda."):
            return name
        return "torch.cuda." + name[len("torch."):]

    class CudaIsCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            device = kwargs.get("device")
            if device is not None and torch.device(device).type == "cuda":
                kwargs["device"] = "cpu"
            return func(*args, **kwargs)

    saved = (torch.cuda.current_device, distrib_optimizer.quantize_param_shard)
    torch.Tensor.type = cuda_type
    torch.cuda.current_device = lambda: "cpu"
    distrib_optimizer.quantize_param_shard = lambda *args, **kwargs: None
    try:
        with CudaIsCpu():
            yield
    finally:
        torch.Tensor.type = tensor_type
        torch.cuda.current_device, distrib_optimizer.quantize_param_shard = saved


def make_model(seed):
    from megatron.core.transformer import TransformerConfig
    from megatron.core.transformer.module import MegatronModule

    config = TransformerConfig(num_layers=1, hidden_size=8, num_attention_heads=1, bf16=True,
                               params_dtype=torch.bfloat16)

    class MLP(MegatronModule):
        def __init__(self):
            super().__init__(config)
            self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b)
                                              for a, b in zip(SIZES, SIZES[1:]))

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x) if i == 0 else layer(torch.tanh(x))
            return x

    gen = torch.Generator().manual_seed(seed)
    model = MLP()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return config, model.to(torch.bfloat16)


def build(seed, **optimizer_kwargs):
    """A DDP-wrapped bf16 model, its DistributedOptimizer around FusedEmaAdamW, a scheduler."""
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

    from ascend_ema_adam.integrations import megatron as glue

    config, model = make_model(seed)
    ddp = DistributedDataParallel(
        config, DistributedDataParallelConfig(use_distributed_optimizer=True,
                                              grad_reduce_in_fp32=True, bucket_size=BUCKET,
                                              overlap_grad_reduce=True),
        model)
    opt_config = OptimizerConfig(optimizer="adam", lr=LR, min_lr=MIN_LR, weight_decay=WD0,
                                 adam_beta1=BETAS[0], adam_beta2=BETAS[1], adam_eps=EPS,
                                 bf16=True, use_distributed_optimizer=True, clip_grad=CLIP)
    opt = glue.get_megatron_optimizer(opt_config, [ddp], **EMA, **optimizer_kwargs)
    sched = OptimizerParamScheduler(opt, init_lr=0.0, max_lr=LR, min_lr=MIN_LR,
                                    lr_warmup_steps=2, lr_decay_steps=K + M,
                                    lr_decay_style="cosine", start_wd=WD0, end_wd=WD1,
                                    wd_incr_steps=K + M, wd_incr_style="linear")
    return ddp, opt, sched


def the_part(opt):
    """The one DistributedOptimizer of the ChainedOptimizer megatron builds."""
    (part,) = opt.chained_optimizers
    return part


def batches(seed, rank, steps):
    gen = torch.Generator().manual_seed(seed + 10 + rank)  # (model inits: seed + 0, 1, 2)
    return [(torch.randn(BATCH, SIZES[0], generator=gen).to(torch.bfloat16),
             torch.randn(BATCH, SIZES[-1], generator=gen)) for _ in range(steps)]


def train(ddp, opt, sched, data, norms=None):
    for x, y in data:
        ddp.zero_grad_buffer()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x).float(), y)
        loss.backward()
        ddp.finish_grad_sync()
        ok, norm, _ = opt.step()
        assert ok
        if norms is not None:
            norms.append(norm)
        sched.step(1)


def shard_layout(ddp, part):
    """(group, index) of each inner-optimizer parameter -> (model parameter name, start, end of
    its shard in the flattened parameter), and each name's place in the dp-zero flat tensor."""
    names = {p: n for n, p in ddp.module.named_parameters()}
    shards, group_of = {}, {}
    for model_param, (gi, oi) in part.model_param_group_index_map.items():
        r = part._get_model_param_range_map(model_param)["param"]
        shards[(gi, oi)] = (names[model_param], r.start, r.end)
        group_of[names[model_param]] = gi
    (buffer,) = part.buffers
    skipped, before = [], 0  # the dp-zero layout: the buckets without their padding
    for bucket in buffer.buckets:
        skipped.append(bucket.offset - before)
        before += bucket.numel_unpadded
    flat = {names[p]: (start - skipped[b], end - skipped[b])
            for p, (start, end, b) in buffer.param_index_map.items()}
    return shards, group_of, flat, len(buffer.buckets)


def record_steps(part, shards, log):
    """Wrap the inner optimizer's step: log each group's lr/weight decay and each shard's
    gradient, as the kernel gets them."""
    inner = part.optimizer
    stock = inner.step

    def step(closure=None):
        log.append(dict(
            hypers=[(g["lr"], g["weight_decay"]) for g in inner.param_groups],
            grads=[(shards[(gi, oi)], p.grad.detach().clone())
                   for gi, g in enumerate(inner.param_groups)
                   for oi, p in enumerate(g["params"])]))
        return stock(closure)

    inner.step = step


def snapshot(ddp, part, shards):
    """This rank's shards of the main parameters and state, the counters, and the full model
    parameters (all-gathered by megatron)."""
    inner = part.optimizer
    out = dict(shards={}, model={n: p.detach().clone() for n, p in ddp.module.named_parameters()},
               num_updates=inner.num_updates,
               group_steps=[None if g.get("step") is None else g["step"].tolist()
                            for g in inner.param_groups])
    for gi, g in enumerate(inner.param_groups):
        for oi, p in enumerate(g["params"]):
            st = inner.state[p]
            out["shards"][shards[(gi, oi)]] = dict(
                param=p.detach().clone(), exp_avg=st["exp_avg"].clone(),
                exp_avg_sq=st["exp_avg_sq"].clone(), ema=st["ema_params"].clone(),
                step=None if "step" not in st else float(st["step"]))
    return out


def in_memory_round_trip(sharded):
    """What dist_checkpointing.load hands back to the same ranks: each sharded object's data."""
    from megatron.core.dist_checkpointing.dict_utils import dict_list_map_inplace
    from megatron.core.dist_checkpointing.mapping import LocalNonpersistentObject, ShardedBase

    def data(x):
        if isinstance(x, LocalNonpersistentObject):
            return x.unwrap()
        if isinstance(x, ShardedBase):
            return x.data
        return x

    return copy.deepcopy(dict_list_map_inplace(data, sharded))


def sharded_keys(sharded):
    from megatron.core.dist_checkpointing.dict_utils import nested_values
    from megatron.core.dist_checkpointing.mapping import ShardedBase
    return sorted({x.key for x in nested_values(sharded) if isinstance(x, ShardedBase)})


def run_mode(rank, seed, out_dir, apex):
    from megatron.core.optimizer import distrib_optimizer

    from ascend_ema_adam.integrations import megatron as glue

    distrib_optimizer.HAVE_APEX_OR_TE = apex
    res = dict(step_scope=glue.megatron_step_scope())
    tag = "apex" if apex else "noapex"
    data = batches(seed, rank, K + M)

    ddp, opt, sched = build(seed)
    part = the_part(opt)
    shards, group_of, flat, n_buckets = shard_layout(ddp, part)
    res.update(shards=sorted(shards.values()), group_of=group_of, flat=flat,
               n_buckets=n_buckets,
               init={n: p.detach().clone() for n, p in ddp.module.named_parameters()},
               inner_scope=part.optimizer.step_scope, log=[])
    record_steps(part, shards, res["log"])

    res["grad_norms"] = []
    train(ddp, opt, sched, data[:K], res["grad_norms"])
    dp_zero_file = os.path.join(out_dir, f"distrib_optim_{tag}.pt")
    other_file = os.path.join(out_dir, f"checkpoint_{tag}.pt")
    opt.save_parameter_state(dp_zero_file)  # rank 0 writes (the wrapped dp-zero gather)
    if rank == 0:
        torch.save(dict(optimizer=opt.state_dict(), scheduler=sched.state_dict(),
                        model=ddp.state_dict()), other_file)
    at_k = snapshot(ddp, part, shards)
    dist.barrier()
    if rank == 0:
        res["dp_zero"] = torch.load(dp_zero_file, weights_only=False)

    train(ddp, opt, sched, data[K:], res["grad_norms"])
    res["final"] = snapshot(ddp, part, shards)

    # The EMA model: inside, the model parameters (all-gathered) hold the EMA; on exit, and
    # after an exception inside, the training weights are back in main and model parameters.
    res["ema_state_dict"] = glue.ema_state_dict(ddp, opt)
    res["after_export"] = snapshot(ddp, part, shards)
    try:
        with glue.swap_ema(opt):
            res["inside_swap"] = snapshot(ddp, part, shards)
            raise KeyError("inside")
    except KeyError:
        res["after_raise"] = snapshot(ddp, part, shards)

    # Resume from the files at step K into a model and optimizer built from another init.
    def resumed(dp_zero_state=None):
        ddp2, opt2, sched2 = build(seed + 1)
        saved = torch.load(other_file, weights_only=False)
        ddp2.load_state_dict(saved["model"])
        opt2.load_state_dict(saved["optimizer"])
        sched2.load_state_dict(saved["scheduler"])
        if dp_zero_state is None:
            opt2.load_parameter_state(dp_zero_file)
        else:
            the_part(opt2).load_parameter_state_from_dp_zero(dp_zero_state if rank == 0 else None)
        return ddp2, opt2, sched2

    ddp2, opt2, sched2 = resumed()
    res["resumed_at_k"] = snapshot(ddp2, the_part(opt2), shards)
    res["at_k"] = at_k
    train(ddp2, opt2, sched2, data[K:])
    res["resumed"] = snapshot(ddp2, the_part(opt2), shards)

    # megatron's own dp-zero file (no EMA): the EMA starts at the loaded weights, with a warning
    stock = torch.load(dp_zero_file, weights_only=False) if rank == 0 else None
    if stock is not None:
        for by_dtype in (v for k, v in stock.items() if k != "buckets_coalesced"):
            for entry in by_dtype.values():
                del entry["ema_params"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ddp3, opt3, _ = resumed(stock)
    res["no_ema_warned"] = any("has no 'ema_params'" in str(w.message) for w in caught)
    res["no_ema_loaded"] = snapshot(ddp3, the_part(opt3), shards)

    # A bad EMA entry (wrong size) on DP rank 0: every rank raises, nothing is loaded.
    before = snapshot(ddp3, the_part(opt3), shards)
    bad = torch.load(dp_zero_file, weights_only=False) if rank == 0 else None
    if bad is not None:
        (entry,) = bad[0].values()
        entry["ema_params"] = entry["ema_params"][:-1]
    try:
        the_part(opt3).load_parameter_state_from_dp_zero(bad)
        res["bad_error"] = None
    except ValueError as e:
        res["bad_error"] = str(e)
    res["bad_before"], res["bad_after"] = before, snapshot(ddp3, the_part(opt3), shards)

    # The distributed checkpoint's optimizer side, both formats (see the module docstring).
    if apex:
        res["dist_ckpt"] = {}
        for sharding in ("fully_sharded_model_space", "dp_zero_gather_scatter"):
            saved = opt.sharded_state_dict(ddp.sharded_state_dict(), sharding_type=sharding)
            keys = sharded_keys(saved)
            ddp4, opt4, _ = build(seed + 2)
            opt4.sharded_state_dict(ddp4.sharded_state_dict(), is_loading=True,
                                    sharding_type=sharding)
            opt4.load_state_dict(in_memory_round_trip(saved))
            res["dist_ckpt"][sharding] = dict(keys=keys,
                                              loaded=snapshot(ddp4, the_part(opt4), shards))
    return res


def worker(rank, port, seed, out_dir):
    torch.set_num_threads(1)  # the same CPU kernels in every process
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=90))
    try:
        with recording_errors(rank, out_dir):
            warnings.filterwarnings("ignore", category=UserWarning, module="megatron")
            warnings.filterwarnings("ignore", category=FutureWarning)
            from megatron.core import parallel_state
            with cpu_shims():
                parallel_state.initialize_model_parallel()
                results = {mode: run_mode(rank, seed, out_dir, apex)
                           for mode, apex in MODES.items()}
            save_results(rank, out_dir, results)
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------------------------------------
# The single-process reference


def full_grads(ranks, step):
    """Step ``step``'s gradient of every parameter, put together from the ranks' shards
    (which must cover each element exactly once)."""
    numel = {n: t.numel() for n, t in ranks[0]["init"].items()}
    grads = {n: torch.zeros(k) for n, k in numel.items()}
    covered = {n: torch.zeros(k, dtype=torch.int32) for n, k in numel.items()}
    for res in ranks:
        for (name, start, end), grad in res["log"][step]["grads"]:
            grads[name][start:end] = grad
            covered[name][start:end] += 1
    assert all(bool((c == 1).all()) for c in covered.values()), "the shards do not partition"
    return grads


def reference(ranks, scope):
    """FusedEmaAdamW over the full flattened fp32 parameters, megatron's groups, the recorded
    gradients and hyper-parameters. Returns its parameters and state after K and K + M steps
    (by parameter name)."""
    init = ranks[0]["init"]
    group_of = {}
    for res in ranks:  # a rank knows the groups of the parameters it holds a shard of
        for name, gi in res["group_of"].items():
            assert group_of.setdefault(name, gi) == gi
    assert set(group_of) == set(init)
    params = {n: init[n].float().reshape(-1).clone() for n in init}
    groups = [{"params": [params[n] for n in sorted(init) if group_of[n] == gi]}
              for gi in range(max(group_of.values()) + 1)]
    opt = FusedEmaAdamW(groups, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD0,
                        step_scope=scope, **EMA)
    out = {}
    for step in range(K + M):
        hypers = ranks[0]["log"][step]["hypers"]
        assert all(r["log"][step]["hypers"] == hypers for r in ranks)
        for g, (lr, wd) in zip(opt.param_groups, hypers, strict=True):
            g["lr"], g["weight_decay"] = lr, wd
        for n, grad in full_grads(ranks, step).items():
            params[n].grad = grad
        opt.step()
        if step + 1 in (K, K + M):
            out[step + 1] = {n: dict(param=p.detach().clone(),
                                     exp_avg=opt.state[p]["exp_avg"].clone(),
                                     exp_avg_sq=opt.state[p]["exp_avg_sq"].clone(),
                                     ema=opt.state[p]["ema_params"].clone())
                             for n, p in params.items()}
    return out


@pytest.fixture(scope="module")
def spawned(tmp_path_factory, new_seed):
    seed, results = spawn_job("megatron", worker, WORLD, TIMEOUT_S, tmp_path_factory, new_seed)
    with one_thread():
        return {mode: dict(seed=seed, ranks=[r[mode] for r in results],
                           ref=reference([r[mode] for r in results],
                                         results[0][mode]["step_scope"]))
                for mode in MODES}


@pytest.fixture(params=list(MODES))
def runs(request, spawned):
    """The results of one of megatron-core's checkpoint branches (without / with apex)."""
    return spawned[request.param]


def assert_same_snapshot(actual, expected, what, seed):
    assert actual["shards"].keys() == expected["shards"].keys(), what
    for shard, e in expected["shards"].items():
        for key, value in e.items():
            a = actual["shards"][shard][key]
            same = a == value if value is None or isinstance(value, float) else torch.equal(a, value)
            assert same, f"{what}: {key} of {shard} differs (seed {seed})"
    for name, value in expected["model"].items():
        assert torch.equal(actual["model"][name], value), f"{what}: model {name} (seed {seed})"
    assert actual["num_updates"] == expected["num_updates"], what
    assert actual["group_steps"] == expected["group_steps"], what


def assert_matches_reference(snap, ref, what, seed, *, model=True):
    """Every shard equals its slice of the reference; the model parameters its bf16 rounding."""
    for (name, start, end), got in snap["shards"].items():
        for key in ("param", "exp_avg", "exp_avg_sq", "ema"):
            assert torch.equal(got[key], ref[name][key][start:end]), (
                f"{what}: {key} of {name}[{start}:{end}] differs from the single process "
                f"(seed {seed})")
    if model:
        for name, value in snap["model"].items():
            expected = ref[name]["param"].to(torch.bfloat16).view(value.shape)
            assert torch.equal(value, expected), f"{what}: model {name} (seed {seed})"


def assert_counters(snap, scope, steps, what):
    assert snap["num_updates"] == steps, what
    if scope == "param":
        assert {s["step"] for s in snap["shards"].values()} == {float(steps)}, what
        assert set(map(str, snap["group_steps"])) == {"None"}, what
    else:
        assert {s["step"] for s in snap["shards"].values()} == {None}, what
        assert snap["group_steps"] == [[steps]] * len(snap["group_steps"]), what


# ------------------------------------------------------------------------------------------
# The sharded run


def test_step_scope_follows_megatrons_checkpoint(spawned):
    for mode, expected in (("no apex", "param"), ("apex", "group")):
        for res in spawned[mode]["ranks"]:
            assert res["step_scope"] == res["inner_scope"] == expected


def test_sharded_run_equals_single_process(runs):
    seed, ref = runs["seed"], runs["ref"]
    ranks = runs["ranks"]
    # what makes it a test of sharding: several buckets, parameters split between the ranks
    assert all(res["n_buckets"] >= 2 for res in ranks)
    names = [{name for name, _, _ in res["shards"]} for res in ranks]
    assert names[0] & names[1], "no parameter is split between the ranks"
    assert any(norm > CLIP for norm in ranks[0]["grad_norms"]), "megatron never clipped"
    for rank, res in enumerate(ranks):
        for steps, snap in ((K, res["at_k"]), (K + M, res["final"])):
            assert_matches_reference(snap, ref[steps], f"rank {rank} after {steps} steps", seed)
            assert_counters(snap, res["step_scope"], steps, f"rank {rank}")
    # the EMA lags the weights (its own value, not a copy)
    final = ref[K + M]
    assert all(not torch.equal(final[n]["ema"], final[n]["param"]) for n in final)


def test_dp_zero_parameter_state_carries_the_ema(runs):
    seed, ref = runs["seed"], runs["ref"][K]
    res = runs["ranks"][0]
    state = res["dp_zero"]
    (entry,) = state[0].values()
    assert {"param", "exp_avg", "exp_avg_sq", "ema_params"} <= set(entry)
    for name, (start, end) in res["flat"].items():
        for key, ref_key in (("param", "param"), ("exp_avg", "exp_avg"),
                             ("exp_avg_sq", "exp_avg_sq"), ("ema_params", "ema")):
            assert torch.equal(entry[key][start:end], ref[name][ref_key]), (
                f"dp-zero {key} of {name} (seed {seed})")
    assert "dp_zero" not in runs["ranks"][1]  # (rank 1 did not read the file)


def test_dp_zero_save_load_resumes_bit_identically(runs):
    seed = runs["seed"]
    for rank, res in enumerate(runs["ranks"]):
        assert_same_snapshot(res["resumed_at_k"], res["at_k"], f"rank {rank} loaded", seed)
        assert_same_snapshot(res["resumed"], res["final"], f"rank {rank} resumed", seed)


def test_checkpoint_without_ema_starts_it_at_the_loaded_weights(runs):
    for rank, res in enumerate(runs["ranks"]):
        assert res["no_ema_warned"], rank
        loaded, at_k = res["no_ema_loaded"], res["at_k"]
        for shard, got in loaded["shards"].items():
            assert torch.equal(got["param"], at_k["shards"][shard]["param"])
            assert torch.equal(got["exp_avg"], at_k["shards"][shard]["exp_avg"])
            assert torch.equal(got["ema"], got["param"])
            assert not torch.equal(at_k["shards"][shard]["ema"], got["param"])


def test_bad_ema_entry_raises_on_every_rank_and_loads_nothing(runs):
    for rank, res in enumerate(runs["ranks"]):
        assert res["bad_error"] is not None and "'ema_params' is [" in res["bad_error"], rank
        assert "nothing loaded" in res["bad_error"]
        assert_same_snapshot(res["bad_after"], res["bad_before"], f"rank {rank}", runs["seed"])


def test_ema_model_export_and_swap(runs):
    seed, ref = runs["seed"], runs["ref"][K + M]
    for rank, res in enumerate(runs["ranks"]):
        exported = res["ema_state_dict"]
        assert set(exported) == set(ref)
        for name, value in exported.items():
            expected = ref[name]["ema"].to(torch.bfloat16).view(value.shape)
            assert value.device.type == "cpu" and torch.equal(value, expected), (rank, name, seed)
        inside = res["inside_swap"]
        for name, value in inside["model"].items():
            assert torch.equal(value, exported[name]), (rank, name)
        for shard, got in inside["shards"].items():
            assert torch.equal(got["param"], got["ema"]), (rank, shard)
        assert_same_snapshot(res["after_export"], res["final"], f"rank {rank} after export", seed)
        assert_same_snapshot(res["after_raise"], res["final"], f"rank {rank} after raise", seed)


def test_distributed_checkpoint_optimizer_side(spawned):
    runs = spawned["apex"]
    ema_keys = set()  # each rank's sharded dict names the parameters it holds a shard of
    for rank, res in enumerate(runs["ranks"]):
        ckpt = res["dist_ckpt"]
        held = {name for name, _, _ in res["shards"]}
        keys = {k for k in ckpt["fully_sharded_model_space"]["keys"]
                if k.startswith("optimizer.state.ema_params.")}
        assert len(keys) == len(held)
        ema_keys |= keys
        for sharding, got in ckpt.items():
            assert_same_snapshot(got["loaded"], dict(res["final"], model=got["loaded"]["model"]),
                                 f"rank {rank} {sharding}", runs["seed"])
    assert ema_keys == {f"optimizer.state.ema_params.module.{n}" for n in runs["ref"][K]}


# ------------------------------------------------------------------------------------------
# In this process: the constructor keywords, and what is refused before anything is built


def test_installed_megatron_core_is_the_pinned_one():
    """The tests run against the version of the ``megatron`` extra (what make test installs)."""
    import sys
    from importlib.metadata import version

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10 (make compat's oldest row)
        import tomli as tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["megatron"]
    assert extra == [f"megatron-core=={version('megatron-core')}"]


@pytest.fixture
def megatron_adam():
    """megatron-core's Adam names (the builder's and the DistributedOptimizer's check's), to
    assert that they are megatron's own again after the glue ran or refused."""
    import megatron.core.optimizer as builder
    from megatron.core.optimizer import distrib_optimizer
    stock = builder.Adam, distrib_optimizer.Adam
    yield stock
    assert (builder.Adam, distrib_optimizer.Adam) == stock


def test_capturable_is_accepted(seed, megatron_adam):
    """megatron-core >= 0.18 passes ``capturable=`` to its Adam: the substitute takes it, and
    the step is the same (this optimizer never syncs with the host either way)."""
    import megatron.core.optimizer as builder

    from ascend_ema_adam.integrations.megatron import substitute_adam

    gen = torch.Generator().manual_seed(seed)
    init = torch.randn(300, generator=gen)
    grads = [torch.randn(300, generator=gen) for _ in range(4)]
    results = []
    for capturable in (False, True):
        p = init.clone().requires_grad_()
        with substitute_adam(ema_decay=0.9):
            assert builder.Adam is not megatron_adam[0]
            opt = builder.Adam(params=[p], lr=1e-2, weight_decay=0.1, betas=(0.9, 0.99),
                               eps=1e-8, capturable=capturable)
        assert isinstance(opt, FusedEmaAdamW) and opt.step_scope == "param"
        assert "capturable" not in opt.defaults  # accepted, nothing to store
        for g in grads:
            p.grad = g.clone()
            opt.step()
        results.append((p.detach().clone(), opt.state[p]["ema_params"].clone()))
    assert not torch.equal(results[0][0], init)
    assert all(torch.equal(a, b) for a, b in zip(*results))
    with pytest.raises(TypeError, match="capturable must be True or False"):
        FusedEmaAdamW([init.clone().requires_grad_()], capturable="yes")


def test_substitute_adam_restores_megatron_after_an_error(megatron_adam):
    import megatron.core.optimizer as builder

    from ascend_ema_adam.integrations.megatron import substitute_adam

    with pytest.raises(RuntimeError, match="inside"):
        with substitute_adam():
            assert builder.Adam is not megatron_adam[0]
            raise RuntimeError("inside")


@pytest.mark.parametrize("change, message", [
    (dict(optimizer="sgd"), "optimizer='adam'"),
    (dict(use_precision_aware_optimizer=True), "use_precision_aware_optimizer"),
    (dict(optimizer_cpu_offload=True), "optimizer_cpu_offload"),
])
def test_unsupported_config_is_refused_before_building(change, message, megatron_adam):
    from megatron.core.optimizer import OptimizerConfig

    from ascend_ema_adam.integrations import megatron as glue

    config = OptimizerConfig(lr=1e-3, bf16=True, use_distributed_optimizer=True)
    for key, value in change.items():  # (set after: the config's own checks need TE for some)
        setattr(config, key, value)
    with pytest.raises(ValueError, match=message):
        glue.get_megatron_optimizer(config, [object()])  # (a model megatron would reject)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(optimizer_kwargs=dict(lr=0.1)), ValueError, "from its OptimizerConfig"),
    (dict(optimizer_kwargs=dict(betas=(0.9, 0.9))), ValueError, "from its OptimizerConfig"),
    (dict(optimizer_kwargs=dict(step_scope="group")), ValueError, "only with step_scope='param'"),
    (dict(ema_decay=1.5), ValueError, "Invalid ema_decay value"),
    (dict(optimizer_kwargs=dict(ema_decay=0.9)), ValueError, "own keyword"),
    (dict(optimizer_kwargs=dict(capturable="yes")), TypeError, "capturable"),
    (dict(optimizer_kwargs=dict(emma_decay=0.9)), TypeError, "emma_decay"),
    (dict(optimizer_kwargs=dict(state_bits=8)), ValueError, "state_bits=8: megatron's"),
])
def test_bad_optimizer_options_are_refused_before_building(kwargs, error, message,
                                                           megatron_adam):
    from megatron.core.optimizer import OptimizerConfig

    from ascend_ema_adam.integrations import megatron as glue

    config = OptimizerConfig(lr=1e-3, bf16=True, use_distributed_optimizer=True)
    with pytest.raises(error, match=message):
        glue.get_megatron_optimizer(config, [object()], **kwargs)


def test_glue_refuses_8bit_groups_before_changing_anything(monkeypatch):
    """An inner FusedEmaAdamW built by hand with an 8-bit group: attach refuses it and leaves
    the optimizer as it was (a stand-in part, taken for a DistributedOptimizer)."""
    from types import SimpleNamespace

    from ascend_ema_adam.integrations import megatron as glue

    inner = FusedEmaAdamW([{"params": [torch.zeros(3, requires_grad=True)]},
                           {"params": [torch.zeros(3, requires_grad=True)], "state_bits": 8}])
    part = SimpleNamespace(optimizer=inner, is_stub_optimizer=False)
    monkeypatch.setattr(glue, "_is_distributed", lambda p: p is part)
    with pytest.raises(ValueError, match="state_bits=8: megatron's"):
        glue.attach(part)
    assert not hasattr(part, "_aea_ema_attached")


def test_glue_refuses_optimizers_around_another_adam():
    from types import SimpleNamespace

    from ascend_ema_adam.integrations import megatron as glue

    ours = SimpleNamespace(optimizer=FusedEmaAdamW([torch.zeros(3, requires_grad=True)]))
    torch_adam = SimpleNamespace(optimizer=torch.optim.AdamW([torch.zeros(3,
                                                                           requires_grad=True)]))
    chained = SimpleNamespace(chained_optimizers=[ours, torch_adam])
    with pytest.raises(TypeError, match="around AdamW"):
        glue.attach(chained)
    with pytest.raises(TypeError, match="around AdamW"):
        with glue.swap_ema(chained):
            pass
    assert not hasattr(ours, "_aea_ema_attached")
