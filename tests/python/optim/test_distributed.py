"""FusedEmaAdamW under ZeroRedundancyOptimizer and FSDP2 (fully_shard, DTensor parameters) on
two gloo ranks (spawned processes on 127.0.0.1), compared bit for bit with a single-process run.

Both ranks train on the same batches, so the data-parallel average of their (identical)
gradients is exact ((g + g) / 2 == g) and every difference would come from the optimizer.
One spawn runs every scenario, for both step scopes (per-parameter steps, which travel in the
state, and MindSpeed's group steps, which travel in the param groups); it is the expensive
part, and the tests below read its results."""

import copy
import datetime
import os

import numpy as np
import pytest
import torch
import torch.distributed as dist
from ranks import one_thread, recording_errors, save_results, spawn_job, tanh_mlp
from test_optim import backward, make_batches, make_model
from torch_features import gloo_averages

from ascend_ema_adam.distributed import gather_full_ema_state_dict, set_clip_process_group, swap_ema
from ascend_ema_adam.optim import FusedEmaAdamW

WORLD = 2
K, M = 5, 5          # steps before the checkpoint, steps after it
TIMEOUT_S = 150      # the whole spawn; a hang fails the tests instead of blocking the suite

ZERO_KWARGS = dict(lr=0.01, ema_decay=0.95, weight_decay=0.05)
EIGHT_BIT = dict(state_bits=8, min_8bit_size=0)  # every parameter on 8 bits (they are small)
FSDP_KWARGS = dict(lr=0.02, ema_decay=0.9, weight_decay=0.01, adam_w_mode=False)
SCOPES = ["param", "group"]
CLIP = 0.05          # fused clipping's max norm: below every step's gradient norm (asserted)


def zero_groups(model):
    """Three groups with their own hyper-parameters; the unused layer (no gradients) sits in
    group 1. ZeRO's greedy partition (largest first, to the least loaded rank) gives rank 0
    group 0 only, so rank 0's shares of groups 1 and 2 are empty, and rank 0 is the one
    that consolidates: its empty groups must still carry the step counters."""
    first = [model.net[2].weight]
    last = [model.net[4].bias]
    rest = [p for p in model.parameters() if not any(p is q for q in first + last)]
    return [{"params": first, "lr": 0.02},
            {"params": rest, "betas": (0.8, 0.99), "weight_decay": 0.0},
            {"params": last, "lr": 0.005, "ema_decay": 0.5}]


def fsdp_model(seed):
    """Row counts 9, 5, 1 over 2 ranks: uneven shards, and rank 1 holds an empty shard of the
    last weight and bias."""
    return tanh_mlp(seed, (6, 9, 5, 1), 0.4)


def fsdp_batches(seed, steps):
    gen = torch.Generator().manual_seed(seed + 2)
    return [(torch.randn(12, 6, generator=gen), torch.randn(12, 1, generator=gen))
            for _ in range(steps)]


def fsdp_backward(model, batch, scale=1.0):
    """``scale``: of the loss, 1/WORLD on the ranks where gloo sums what FSDP2 asks it to average
    (torch_features.gloo_averages; exact, a power of two): their mean is the same gradient."""
    for p in model.parameters():
        p.grad = None
    x, y = batch
    loss = torch.nn.functional.mse_loss(model(x), y)
    (loss if scale == 1.0 else loss * scale).backward()


def fsdp_loss_scale():
    return 1.0 if gloo_averages() else 1.0 / WORLD


def clone_tree(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, dict):
        return {k: clone_tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(clone_tree(v) for v in x)
    return x


def full_params(model):
    return {n: (p.full_tensor() if hasattr(p, "full_tensor") else p.detach()).clone()
            for n, p in model.named_parameters()}


# ------------------------------------------------------------------------------------------
# The ranks


def zero_scenario(rank, seed, out_dir, scope, options=None):
    """``options``: more FusedEmaAdamW arguments (EIGHT_BIT)."""
    from torch.distributed.optim import ZeroRedundancyOptimizer

    res = {}
    options = options or {}
    batches = make_batches(seed, K + M)
    model = make_model(seed, extra=True)
    zero = ZeroRedundancyOptimizer(zero_groups(model), optimizer_class=FusedEmaAdamW,
                                   **ZERO_KWARGS, **options, step_scope=scope)
    res["local_group_sizes"] = [len(g["params"]) for g in zero.optim.param_groups]
    for batch in batches[:K]:
        backward(model, batch)
        zero.step()
    zero.consolidate_state_dict(to=0)
    checkpoint = os.path.join(out_dir, f"zero_optimizer_{scope}_{len(options)}.pt")
    if rank == 0:
        torch.save(zero.state_dict(), checkpoint)
    model_k = copy.deepcopy(model.state_dict())
    for batch in batches[K:]:
        backward(model, batch)
        zero.step()

    res["params"] = full_params(model)
    res["ema"] = gather_full_ema_state_dict(model, zero)
    zero.consolidate_state_dict(to=0)
    if rank == 0:
        res["state_dict"] = clone_tree(zero.state_dict())
    with swap_ema(zero):
        res["swapped"] = full_params(model)
    res["after_swap"] = full_params(model)
    try:
        with swap_ema(zero):
            raise KeyError("inside")
    except KeyError:
        res["after_raise"] = full_params(model)
    try:  # refused before anything moves (and before the collective: every rank alike)
        with swap_ema(zero, stash_device="meta"):
            pass
    except ValueError:
        res["after_meta"] = full_params(model)

    # Resume from the consolidated checkpoint, every rank loading the same file.
    dist.barrier()
    resumed = make_model(seed + 99, extra=True)
    resumed.load_state_dict(model_k)
    zero2 = ZeroRedundancyOptimizer(zero_groups(resumed), optimizer_class=FusedEmaAdamW,
                                    **ZERO_KWARGS, **options, step_scope=scope)
    zero2.load_state_dict(torch.load(checkpoint, weights_only=True))
    for batch in batches[K:]:
        backward(resumed, batch)
        zero2.step()
    res["resumed_params"] = full_params(resumed)
    res["resumed_ema"] = gather_full_ema_state_dict(resumed, zero2)
    res["resumed_num_updates"] = zero2.optim.num_updates
    return res


def fsdp_scenario(rank, seed, out_dir, scope):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor

    mesh = init_device_mesh("cpu", (WORLD,))

    def shard(model):
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        return model

    res = {}
    scale = fsdp_loss_scale()
    batches = fsdp_batches(seed, K + M)
    model = shard(fsdp_model(seed))
    opt = FusedEmaAdamW(model.parameters(), **FSDP_KWARGS, step_scope=scope)
    for batch in batches[:K]:
        fsdp_backward(model, batch, scale)
        opt.step()
    checkpoint = clone_tree(opt.state_dict())   # sharded: DTensor values
    params_k = full_params(model)
    for batch in batches[K:]:
        fsdp_backward(model, batch, scale)
        opt.step()

    layout = []
    for p in model.parameters():
        st = {k: t for k, t in opt.state[p].items() if k != "step"}
        layout.append(dict(
            all_dtensor=all(isinstance(t, DTensor) for t in st.values()),
            placements_match=all(t.placements == p.placements for t in st.values()),
            local_shape=tuple(st["ema_params"].to_local().shape),
            full_shape=tuple(p.shape)))
    res["layout"] = layout
    # the step is a plain tensor: the group's (MindSpeed), or each parameter's (like torch's)
    steps = ([opt.param_groups[0]["step"]] if scope == "group"
             else [opt.state[p]["step"] for p in model.parameters()])
    res["step_is_plain_tensor"] = all(type(t) is torch.Tensor for t in steps)
    res["steps"] = [t.tolist() for t in steps]
    res["params"] = full_params(model)
    res["ema"] = gather_full_ema_state_dict(model, opt)
    res["ema_rank0_only"] = gather_full_ema_state_dict(model, opt, rank0_only=True)
    with opt.swap_ema():
        res["swapped"] = full_params(model)
    res["after_swap"] = full_params(model)

    resumed = fsdp_model(seed + 99)
    resumed.load_state_dict(params_k)
    resumed = shard(resumed)
    opt2 = FusedEmaAdamW(resumed.parameters(), **FSDP_KWARGS, step_scope=scope)
    opt2.load_state_dict(checkpoint)
    for batch in batches[K:]:
        fsdp_backward(resumed, batch, scale)
        opt2.step()
    res["resumed_params"] = full_params(resumed)
    res["resumed_ema"] = gather_full_ema_state_dict(resumed, opt2)
    return res


def zero_clip_scenario(rank, seed):
    """ZeRO with max_grad_norm: each rank's local optimizer holds a share of the parameters, and
    the norm is global through set_clip_process_group."""
    from torch.distributed.optim import ZeroRedundancyOptimizer

    model = make_model(seed, extra=True)
    zero = ZeroRedundancyOptimizer(zero_groups(model), optimizer_class=FusedEmaAdamW,
                                   **ZERO_KWARGS, max_grad_norm=CLIP)
    set_clip_process_group(zero)
    norms = []
    for batch in make_batches(seed, K + M):
        backward(model, batch)
        zero.step()
        norms.append(zero.optim.last_grad_norm.clone())
    return dict(params=full_params(model), ema=gather_full_ema_state_dict(model, zero),
                norms=norms)


def fsdp_clip_scenario(rank, seed):
    """FSDP2 with clip_grad_norm_: DTensor gradients sharded over the mesh, reduced over it."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (WORLD,))
    model = fsdp_model(seed)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = FusedEmaAdamW(model.parameters(), **FSDP_KWARGS)
    norms, scale = [], fsdp_loss_scale()
    for batch in fsdp_batches(seed, K + M):
        fsdp_backward(model, batch, scale)
        norms.append(opt.clip_grad_norm_(CLIP).clone())
        opt.step()
    return dict(params=full_params(model), ema=gather_full_ema_state_dict(model, opt),
                norms=norms)


def worker(rank, port, seed, out_dir):
    torch.set_num_threads(1)  # identical CPU kernels (and summation orders) on every process
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    try:
        with recording_errors(rank, out_dir):
            results = {scope: {"zero": zero_scenario(rank, seed, out_dir, scope),
                               "fsdp": fsdp_scenario(rank, seed, out_dir, scope)}
                       for scope in SCOPES}
            results["clip"] = {"zero": zero_clip_scenario(rank, seed),
                               "fsdp": fsdp_clip_scenario(rank, seed)}
            results["zero8"] = zero_scenario(rank, seed, out_dir, "param", EIGHT_BIT)
            save_results(rank, out_dir, results)
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------------------------------------
# Single-process references (in this process, one thread like the ranks)


def single_process_zero(seed, scope, options=None):
    batches = make_batches(seed, K + M)
    model = make_model(seed, extra=True)
    opt = FusedEmaAdamW(zero_groups(model), **ZERO_KWARGS, **(options or {}), step_scope=scope)
    for batch in batches:
        backward(model, batch)
        opt.step()
    return model, opt


def single_process_fsdp(seed, scope):
    model = fsdp_model(seed)
    opt = FusedEmaAdamW(model.parameters(), **FSDP_KWARGS, step_scope=scope)
    for batch in fsdp_batches(seed, K + M):
        fsdp_backward(model, batch)
        opt.step()
    return model, opt


def single_process_clip(seed):
    """The clipping runs without ranks: ZeRO's model with max_grad_norm, FSDP2's with
    clip_grad_norm_ (the ZeRO run's norms are torch's get_total_norm)."""
    model = make_model(seed, extra=True)
    opt = FusedEmaAdamW(zero_groups(model), **ZERO_KWARGS, max_grad_norm=CLIP)
    zero_norms = []
    for batch in make_batches(seed, K + M):
        backward(model, batch)
        zero_norms.append(torch.nn.utils.get_total_norm(
            [p.grad for p in model.parameters() if p.grad is not None]))
        opt.step()
    fsdp = fsdp_model(seed)
    fopt = FusedEmaAdamW(fsdp.parameters(), **FSDP_KWARGS)
    fsdp_norms = []
    for batch in fsdp_batches(seed, K + M):
        fsdp_backward(fsdp, batch)
        fsdp_norms.append(fopt.clip_grad_norm_(CLIP))
        fopt.step()
    return dict(zero=(model, opt, zero_norms), fsdp=(fsdp, fopt, fsdp_norms))


@pytest.fixture(scope="module")
def spawned(tmp_path_factory, new_seed):
    seed, results = spawn_job("distributed", worker, WORLD, TIMEOUT_S, tmp_path_factory,
                              new_seed)
    with one_thread():
        out = {scope: dict(seed=seed, ranks=[r[scope] for r in results],
                           zero_ref=single_process_zero(seed, scope),
                           fsdp_ref=single_process_fsdp(seed, scope))
               for scope in SCOPES}
        out["clip"] = dict(seed=seed, ranks=[r["clip"] for r in results],
                           ref=single_process_clip(seed))
        out["zero8"] = dict(seed=seed, ranks=[r["zero8"] for r in results],
                            ref=single_process_zero(seed, "param", EIGHT_BIT))
    return out


@pytest.fixture(params=SCOPES)
def runs(request, spawned):
    """The results of one step scope."""
    return spawned[request.param]


def assert_same_dict(actual, expected, what, seed):
    assert list(actual) == list(expected), (what, seed)
    for name in expected:
        a, e = actual[name], expected[name]
        assert a.dtype == e.dtype and torch.equal(a, e), f"{what} {name} differs (seed {seed})"


def assert_same_tree(actual, expected, where):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor) and actual.dtype == expected.dtype, where
        assert torch.equal(actual.to(expected.device), expected), where
    elif isinstance(expected, dict):
        assert set(actual) == set(expected), (where, set(actual) ^ set(expected))
        for k in expected:
            assert_same_tree(actual[k], expected[k], f"{where}.{k}")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_tree(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, (where, actual, expected)


# ------------------------------------------------------------------------------------------
# ZeroRedundancyOptimizer


def test_zero_equals_single_process(runs):
    model, opt = runs["zero_ref"]
    params = {n: p.detach() for n, p in model.named_parameters()}
    ema = opt.ema_state_dict(model)
    sizes = [r["zero"]["local_group_sizes"] for r in runs["ranks"]]
    assert [sum(g) for g in zip(*sizes)] == [len(g["params"]) for g in opt.param_groups]
    assert sizes == [[1, 0, 0], [0, 6, 1]]  # rank 0's shares of groups 1 and 2 are empty
    for rank, res in enumerate(runs["ranks"]):
        assert_same_dict(res["zero"]["params"], params, f"rank {rank} params", runs["seed"])
        assert_same_dict(res["zero"]["ema"], ema, f"rank {rank} EMA", runs["seed"])
    unused = [n for n in params if n.startswith("unused.")]
    assert unused and all(torch.equal(ema[n], params[n]) for n in unused)


def test_zero_consolidated_state_dict_gathers_ema_and_counters(runs):
    model, opt = runs["zero_ref"]
    expected = opt.state_dict()
    actual = runs["ranks"][0]["zero"]["state_dict"]
    # every parameter with a gradient has its moments and EMA, equal to the single process's
    assert set(actual["state"]) == set(expected["state"])
    per_param = opt.step_scope == "param"  # the steps travel in the state, not the groups
    assert all(set(st) == {"exp_avg", "exp_avg_sq", "ema_params"} | ({"step"} if per_param
                                                                     else set())
               for st in actual["state"].values())
    assert_same_tree(actual["state"], expected["state"], "state")
    for a, e in zip(actual["param_groups"], expected["param_groups"], strict=True):
        assert a["params"] == e["params"]
        for key in ("lr", "betas", "weight_decay", "ema_decay", "num_updates", "bias_correction"):
            assert a[key] == e[key], key
        if per_param:
            assert "step" not in a and "step" not in e
        else:
            assert a["step"].tolist() == e["step"].tolist() == [K + M]
    if per_param:
        assert all(st["step"].item() == K + M for st in actual["state"].values())


def test_zero_resume_from_consolidated_checkpoint_is_bit_identical(runs):
    for rank, res in enumerate(runs["ranks"]):
        z = res["zero"]
        assert_same_dict(z["resumed_params"], z["params"], f"rank {rank} params", runs["seed"])
        assert_same_dict(z["resumed_ema"], z["ema"], f"rank {rank} EMA", runs["seed"])
        assert z["resumed_num_updates"] == K + M  # the warm-up count came back from the file


def test_zero_swap_ema_helper(runs):
    for rank, res in enumerate(runs["ranks"]):
        z = res["zero"]
        assert_same_dict(z["swapped"], z["ema"], f"rank {rank} inside swap_ema", runs["seed"])
        assert_same_dict(z["after_swap"], z["params"], f"rank {rank} after", runs["seed"])
        assert_same_dict(z["after_raise"], z["params"], f"rank {rank} after raise",
                         runs["seed"])
        assert_same_dict(z["after_meta"], z["params"], f"rank {rank} after a meta stash",
                         runs["seed"])


def test_zero_8bit_state_equals_single_process_and_resumes(spawned):
    """state_bits=8 under ZeRO: rank 0 holds empty shares of groups 1 and 2 and consolidates,
    so its checkpoint must still carry those groups' maps (the other rank's codes are decoded
    with them on resume). Parameters, EMA, the consolidated state (codes and scales) and the
    maps equal the single process's; the resumed run is bit-identical."""
    runs = spawned["zero8"]
    model, opt = runs["ref"]
    params = {n: p.detach() for n, p in model.named_parameters()}
    ema = opt.ema_state_dict(model)
    for rank, res in enumerate(runs["ranks"]):
        assert_same_dict(res["params"], params, f"rank {rank} params", runs["seed"])
        assert_same_dict(res["ema"], ema, f"rank {rank} EMA", runs["seed"])
        assert_same_dict(res["resumed_params"], res["params"], f"rank {rank} resumed",
                         runs["seed"])
        assert_same_dict(res["resumed_ema"], res["ema"], f"rank {rank} resumed EMA", runs["seed"])
    actual, expected = runs["ranks"][0]["state_dict"], opt.state_dict()
    assert all("exp_avg_codes" in st for st in actual["state"].values())
    assert_same_tree(actual["state"], expected["state"], "state")
    for a, e in zip(actual["param_groups"], expected["param_groups"], strict=True):
        for key in ("exp_avg_qmap", "exp_avg_sq_qmap"):
            assert torch.equal(a[key], e[key]), key


# ------------------------------------------------------------------------------------------
# FSDP2


def test_fsdp2_equals_single_process(runs):
    model, opt = runs["fsdp_ref"]
    params = {n: p.detach() for n, p in model.named_parameters()}
    ema = opt.ema_state_dict(model)
    for rank, res in enumerate(runs["ranks"]):
        assert_same_dict(res["fsdp"]["params"], params, f"rank {rank} params", runs["seed"])
        assert_same_dict(res["fsdp"]["ema"], ema, f"rank {rank} EMA", runs["seed"])
    assert runs["ranks"][1]["fsdp"]["ema_rank0_only"] == {}
    assert_same_dict(runs["ranks"][0]["fsdp"]["ema_rank0_only"], ema, "rank0_only",
                     runs["seed"])
    assert not any(torch.equal(ema[n], params[n]) for n in params)


def test_fsdp2_state_stays_sharded(runs):
    shards = []
    for res in runs["ranks"]:
        layout = res["fsdp"]["layout"]
        assert all(entry["all_dtensor"] and entry["placements_match"] for entry in layout)
        assert res["fsdp"]["step_is_plain_tensor"]
        assert {tuple(np.ravel(s)) for s in res["fsdp"]["steps"]} == {(K + M,)}
        shards.append([entry["local_shape"] for entry in layout])
    full = [entry["full_shape"] for entry in runs["ranks"][0]["fsdp"]["layout"]]
    for (a, b), shape in zip(zip(*shards), full):
        assert a[0] + b[0] == shape[0] and a[1:] == b[1:] == shape[1:]  # split along dim 0
        assert a[0] < shape[0] or shape[0] == 1                        # really sharded
    assert (0, 5) in shards[1] and (0,) in shards[1]  # empty local shards are handled


def test_fsdp2_swap_ema_and_resume(runs):
    for rank, res in enumerate(runs["ranks"]):
        f = res["fsdp"]
        assert_same_dict(f["swapped"], f["ema"], f"rank {rank} inside swap_ema", runs["seed"])
        assert_same_dict(f["after_swap"], f["params"], f"rank {rank} after", runs["seed"])
        assert_same_dict(f["resumed_params"], f["params"], f"rank {rank} resumed params",
                         runs["seed"])
        assert_same_dict(f["resumed_ema"], f["ema"], f"rank {rank} resumed EMA", runs["seed"])


# ------------------------------------------------------------------------------------------
# Fused clipping: the norm is global (partial norms all-reduced), so the sharded runs equal the
# single process to fp32 rounding (the norm's summation order differs: not bit for bit)


def assert_close_dict(actual, expected, what, seed, tol=1e-6):
    assert list(actual) == list(expected), what
    scale = max(e.abs().max().item() for e in expected.values())
    err = max((actual[n] - expected[n]).abs().max().item() for n in expected)
    assert err <= tol * scale, f"{what}: {err:.3e} of scale {scale:.3e} (seed {seed})"


@pytest.mark.parametrize("kind", ["zero", "fsdp"])
def test_fused_clipping_norm_is_global(spawned, kind):
    runs = spawned["clip"]
    model, opt, ref_norms = runs["ref"][kind]
    assert all(n > CLIP for n in ref_norms)  # every step clips
    params = {n: p.detach() for n, p in model.named_parameters()}
    ema = opt.ema_state_dict(model)
    for rank, res in enumerate(runs["ranks"]):
        got = res[kind]
        for step, (a, e) in enumerate(zip(got["norms"], ref_norms, strict=True)):
            assert abs(a.item() - e.item()) <= 1e-6 * e.item(), (rank, step, a, e)
        assert_close_dict(got["params"], params, f"{kind} rank {rank} params", runs["seed"])
        assert_close_dict(got["ema"], ema, f"{kind} rank {rank} EMA", runs["seed"])
