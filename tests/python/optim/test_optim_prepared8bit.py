"""Phase-2-only steps of 8-bit state: a cached 8-bit group of FusedEmaAdamW on the CPU launches
through its prepared launches (_C.ApplyFusedEmaAdam8bitListLaunch: CANN's repeatable executors),
prepared once and run again while nothing phase 1 checked has changed. Here:
ApplyFusedEmaAdam8bitListLaunch itself (bit for bit the op over many runs, what makes run() refuse,
that a refusal writes nothing, the op's errors at construction), then the optimizer through the
changes that must prepare again (or must not), bit for bit an optimizer that checks and launches
through the op at every step."""

import re
import types

import pytest
import torch

import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from adam8bit_cases import QMAP_M, QMAP_V, make_entries
from ascend_ema_adam import _C
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES, to_torch
from ascend_ema_adam.golden import Hyper
from ascend_ema_adam.ops import apply_fused_ema_adam8bit_list
from ascend_ema_adam.optim import FusedEmaAdamW

LISTS = ("grads", "vars", "ms", "vs", "m_absmaxes", "v_absmaxes", "ss", "model_copies")
KEYS = dict(zip(LISTS, ("grad", "var", "m", "v", "m_absmax", "v_absmax", "s", "copy")))
UPDATED = LISTS[1:]
H = Hyper()
NUMBERS = (H.beta1, H.beta2, H.eps, H.mode, H.bias_correction, H.weight_decay)
#: fp32 parameters; fp32 masters with bf16 model copies (both fp32 gradients)
ROWS = {"f32": LIST8BIT_DTYPES[0],
        "f32-master-bf16": next(r for r in LIST8BIT_DTYPES
                                if r.copy is not None and r.copy.name == "bfloat16"
                                and r.grad.name == "float32")}


def seed_of(rng):
    return int(rng.integers(2**31))


def state_of(rng, sizes, row=ROWS["f32"], ema=True):
    """Fresh entries as torch lists by name (None: an absent list)."""
    entries = make_entries(rng, sizes, row, ema)
    return {name: [to_torch(e[KEYS[name]]) for e in entries]
            if entries[0][KEYS[name]] is not None else None for name in LISTS}


def maps():
    return torch.from_numpy(QMAP_M.copy()), torch.from_numpy(QMAP_V.copy())


def fresh_grads(gen, x):
    return [(torch.randn(g.shape, generator=gen) * 1e-2).to(g.dtype) for g in x["grads"]]


def clone_updated(x):
    return {name: None if x[name] is None else [t.clone() for t in x[name]] for name in UPDATED}


def assert_same(x, y):
    for name in UPDATED:
        if x[name] is not None:
            assert all(torch.equal(a, b) for a, b in zip(x[name], y[name])), name


def prepare(x, qm, qv, step, scale=None, found=None, lr=1e-3, decay=0.99, maximize=False):
    return _C.ApplyFusedEmaAdam8bitListLaunch(*(x[name] or [] for name in LISTS), qm, qv, step,
                                              scale, found, lr, decay, *NUMBERS, maximize)


def op(x, grads, qm, qv, step, scale=None, found=None, lr=1e-3, decay=0.99, maximize=False):
    apply_fused_ema_adam8bit_list(grads, *(x[name] for name in LISTS[1:7]), qm, qv, step, lr,
                                  decay, *NUMBERS, model_copies=x["model_copies"],
                                  grad_scale=scale, found_inf=found, maximize=maximize)


#: 300 entries (two launches), whole and partial blocks
SIZES = [1, 17, 256, 257, 600] * 60


@pytest.mark.parametrize("ema", [True, False], ids=["ema", "no-ema"])
@pytest.mark.parametrize("row", list(ROWS))
def test_launch_runs_again_bit_for_bit_the_op(rng, row, ema):
    """Five runs with new gradients, step tensors, lr and decay values each time (and a grad
    scale whose tensor moves): the op's bits, on both launches."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    x = state_of(rng, SIZES, ROWS[row], ema)
    reference = clone_updated(x) | {"grads": None}
    qm, qv = maps()
    scale = torch.tensor([4.0])
    launch = prepare(x, qm, qv, torch.tensor([1]), scale, maximize=True)
    assert launch.launches == 2
    for k in range(1, 6):
        grads = fresh_grads(gen, x)
        step, scale = torch.tensor([k]), torch.tensor([float(2 ** k)])
        lr, decay = 1e-3 * k, 0.9 + 0.01 * k
        assert launch.run(grads, step, lr, decay, scale, None)
        op(reference, grads, qm, qv, step, scale, None, lr, decay, maximize=True)
        assert_same(x, reference)


def test_launch_reads_lr_and_decay_tensors_and_found_inf(rng):
    """lr and the decay as one-element tensors (read at each run), and a found-inf flag: a flagged
    run writes nothing, the next one updates as the op."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    x = state_of(rng, [300, 5, 1024])
    reference = clone_updated(x) | {"grads": None}
    qm, qv = maps()
    lr, decay, found = torch.tensor([1e-3]), torch.tensor([0.9]), torch.tensor([0.0])
    launch = prepare(x, qm, qv, torch.tensor([3]), None, found, lr, decay)
    for k, flag in enumerate((0.0, 1.0, 0.0)):
        grads = fresh_grads(gen, x)
        lr.fill_(1e-3 * (k + 1))
        decay.fill_(0.9 + 0.02 * k)
        found.fill_(flag)
        before = clone_updated(x)
        assert launch.run(grads, torch.tensor([3 + k]), lr, decay, None, found)
        if flag:
            assert_same(x, before)
        op(reference, grads, qm, qv, torch.tensor([3 + k]), None, found, lr, decay)
        assert_same(x, reference)


def refusals():
    """(what changes: a function of the run's inputs, after which run() must refuse)."""
    def replaced_var(x):
        x["vars"][3].data = x["vars"][3].clone()
    def reshaped_grad(x):
        x["grads"][0] = x["grads"][0].reshape(1, -1)
    def grad_dtype(x):
        x["grads"][2] = x["grads"][2].double()
    def fewer_grads(x):
        x["grads"].pop()
    def grad_inside_ema(x):
        x["grads"][2] = x["ss"][3][7:7 + x["grads"][2].numel()]
    def grad_inside_var(x):
        x["grads"][0] = x["vars"][0]
    def step_zero(x):
        x["step"] = torch.tensor([0])
    def step_float(x):
        x["step"] = torch.tensor([2.0])
    def step_inside_var(x):
        x["step"] = x["vars"][3].view(-1)[:2].view(torch.int64)
    def scale_given(x):
        x["scale"] = torch.tensor([2.0])
    def map_written(x):
        x["qm"].mul_(1.0)  # the same values, but written: phase 1 checked them
    def map_replaced_in_storage(x):
        x["qv"].set_(x["qv"].clone())
    return {"var replaced": replaced_var, "grad reshaped": reshaped_grad,
            "grad dtype": grad_dtype, "fewer grads": fewer_grads,
            "grad inside an EMA": grad_inside_ema, "grad is a parameter": grad_inside_var,
            "step 0 with bias correction": step_zero, "step of another dtype": step_float,
            "step inside a parameter": step_inside_var,
            "grad scale given": scale_given, "map written": map_written,
            "map's memory replaced": map_replaced_in_storage}


#: changes after which the launch no longer describes the call, for good
FOR_GOOD = ("var replaced", "map written", "map's memory replaced")


@pytest.mark.parametrize("change", list(refusals()))
def test_launch_refuses_what_phase_1_did_not_check(rng, change):
    """run() returns False and writes nothing when anything phase 1 checked has changed; a launch
    refused for this run only still runs the unchanged call, as the op."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    x = state_of(rng, [15, 4, 1, 300])
    qm, qv = maps()
    launch = prepare(x, qm, qv, torch.tensor([1]))
    assert launch.run(x["grads"], torch.tensor([1]), 1e-3, 0.99, None, None)
    given = dict(grads=fresh_grads(gen, x), step=torch.tensor([2]), scale=None, qm=qm, qv=qv,
                 vars=x["vars"], ss=x["ss"])
    refusals()[change](given)
    before = clone_updated(x)
    assert not launch.run(given["grads"], given["step"], 1e-3, 0.99, given["scale"], None)
    assert_same(x, before)
    grads = fresh_grads(gen, x)
    if change in FOR_GOOD:
        assert not launch.run(grads, torch.tensor([2]), 1e-3, 0.99, None, None)
        assert_same(x, before)
        return
    reference = clone_updated(x) | {"grads": None}
    assert launch.run(grads, torch.tensor([2]), 1e-3, 0.99, None, None)
    op(reference, grads, qm, qv, torch.tensor([2]))
    assert_same(x, reference)


def test_launch_is_validated_as_the_op_is(rng):
    """The constructor raises the op's errors (an overlap, a map out of order, both named as the
    op names them) and writes nothing; run() refuses a gradient list holding something else than
    tensors, writing nothing."""
    x = state_of(rng, [8, 8])
    qm, qv = maps()
    before = clone_updated(x)
    overlapping = dict(x, vs=[x["vs"][0], x["ms"][1]])
    with pytest.raises(RuntimeError, match=r"msRef\[1\] and vsRef\[1\] overlap in memory"):
        prepare(overlapping, qm, qv, torch.tensor([1]))
    with pytest.raises(RuntimeError, match=r"qmapV"):
        prepare(x, qm, qv.flip(0).contiguous(), torch.tensor([1]))
    # a step inside a parameter: refused as the op refuses it (the launch reads a copy)
    inside = x["vars"][0][:2].view(torch.int64)
    with pytest.raises(RuntimeError, match=r"varsRef\[0\] and step overlap in memory") as op_error:
        op(x, x["grads"], qm, qv, inside)
    with pytest.raises(RuntimeError) as launch_error:
        prepare(x, qm, qv, inside)
    def reason(error):  # the message without the layer that raised it (phase 1, whole call)
        return re.search(r"varsRef\[0\] and step overlap in memory[^\n]*", str(error.value))[0]
    assert reason(launch_error) == reason(op_error)
    assert_same(x, before)
    launch = prepare(x, qm, qv, torch.tensor([1]))
    with pytest.raises(TypeError, match=r"grads\[1\] is a numpy.ndarray, not a tensor"):
        launch.run([x["grads"][0], x["grads"][1].numpy()], torch.tensor([1]), 1e-3, 0.99, None,
                   None)
    assert_same(x, before)


# ------------------------------------------------------------------------------------------
# FusedEmaAdamW: prepared once, run again, prepared again after a change


class Counting:
    """_C for the optimizer's launches: counts the 8-bit and the fp32 launches' constructions and
    runs (refused runs apart)."""

    def __init__(self):
        self.counts = {"8bit": [0, 0, 0], "fp32": [0, 0, 0]}  # made, ran, refused

        def spied(base, counts):
            class Spy(base):
                def __init__(self, *args):
                    counts[0] += 1
                    super().__init__(*args)

                def run(self, *args):
                    ok = super().run(*args)
                    counts[1 if ok else 2] += 1
                    return ok
            return Spy

        self.module = types.SimpleNamespace(
            ApplyFusedEmaAdam8bitListLaunch=spied(_C.ApplyFusedEmaAdam8bitListLaunch,
                                                  self.counts["8bit"]),
            ApplyFusedEmaAdamListLaunch=spied(_C.ApplyFusedEmaAdamListLaunch, self.counts["fp32"]))

    def take(self, kind="8bit"):
        seen = tuple(self.counts[kind])
        self.counts[kind][:] = [0, 0, 0]
        return seen


@pytest.fixture
def counting(monkeypatch):
    c = Counting()
    monkeypatch.setattr(optim_module, "_C", c.module)
    return c


#: 8-bit state from 256 elements on: the first three parameters' kind, the last two keep fp32
SHAPES = [(40, 30), (257,), (3, 512), (7,), (100,)]


def make_params(seed):
    gen = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=gen) * 0.1) for s in SHAPES]


def set_grads(params, seed, skip=()):
    gen = torch.Generator().manual_seed(seed)
    for k, p in enumerate(params):
        p.grad = None if k in skip else (torch.randn(p.shape, generator=gen) * 0.01).to(p.dtype)


class Pair:
    """The optimizer under test and a reference that checks fully and launches through the op at
    every step (no group cache), over parameters with the same values."""

    def __init__(self, seed, **kwargs):
        self.params = [make_params(seed) for _ in range(2)]
        self.opts = [FusedEmaAdamW(ps, lr=0.05, ema_decay=0.9, state_bits=8, min_8bit_size=256,
                                   **kwargs) for ps in self.params]
        self.opts[1]._launch_cache.remember = lambda *args, **kw: False

    def both(self, change):
        for ps, opt in zip(self.params, self.opts):
            change(opt, ps)

    def step(self, seed, skip=()):
        for ps, opt in zip(self.params, self.opts):
            set_grads(ps, seed, skip)
            opt.step()
        a, b = self.opts
        for pa, pb in zip(*self.params):
            assert torch.equal(pa, pb)
            assert a.state[pa].keys() == b.state[pb].keys()
            for key, value in a.state[pa].items():
                assert torch.equal(value, b.state[pb][key]), key


STEADY = (0, 1, 0)  # a step of a cached group: one launch run, none made, none refused


@pytest.mark.parametrize("scope", ["param", "group"])
def test_steady_8bit_steps_are_phase_2_only(rng, counting, scope):
    """Step 1 checks fully (the ops), step 2 prepares both kinds' launches, every later step only
    runs them, with new gradients each time and an lr schedule; bit for bit the reference."""
    seed = seed_of(rng)
    pair = Pair(seed, step_scope=scope)
    pair.step(seed)
    assert counting.take() == (0, 0, 0) and counting.take("fp32") == (0, 0, 0)
    pair.step(seed + 1)
    assert counting.take() == (1, 1, 0) and counting.take("fp32") == (1, 1, 0)
    for k in range(2, 7):
        pair.both(lambda opt, ps: opt.param_groups[0].__setitem__("lr", 0.05 / k))
        pair.step(seed + k)
        assert counting.take() == STEADY and counting.take("fp32") == STEADY


def new_weight_decay(opt, ps):
    opt.param_groups[0]["weight_decay"] = 0.3


def reload_state(opt, ps):
    opt.load_state_dict(opt.state_dict())


def new_maps(opt, ps):
    group = opt.param_groups[0]
    group["exp_avg_qmap"] = group["exp_avg_qmap"].clone()


def map_written(opt, ps):
    opt.param_groups[0]["exp_avg_sq_qmap"].mul_(1.0)


def codes_written(opt, ps):
    opt.state[ps[0]]["exp_avg_codes"].bitwise_xor_(1)


def replace_param(opt, ps):
    ps[2].data = ps[2].detach().clone() + 1


# change -> (whether the group is checked fully first, the 8-bit launches' (made, ran, refused)
# at the cached step after it)
CHANGES = {
    "weight decay changed": (False, new_weight_decay, (1, 1, 0)),
    "state reloaded": (True, reload_state, (1, 1, 0)),
    "maps replaced": (True, new_maps, (1, 1, 0)),
    "a map written in place": (True, map_written, (1, 1, 0)),
    "parameter's memory replaced": (True, replace_param, (1, 1, 0)),
    "codes written in place": (False, codes_written, STEADY),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_changes_prepare_again_or_not(rng, counting, change):
    """After each change the optimizer does what the reference does, bit for bit, and prepares
    its 8-bit launch again exactly when the change touched what phase 1 checked: an attribute,
    new state tensors or maps (a new group cache, after a full check), a map's values (its
    version), a parameter's memory; not for a write into the codes' memory."""
    seed = seed_of(rng)
    pair = Pair(seed)
    for k in range(3):
        pair.step(seed + k)
    counting.take()
    full_first, fn, expected = CHANGES[change]
    pair.both(fn)
    pair.step(seed + 3)
    if full_first:  # the group is checked fully (the op), then cached
        assert counting.take() == (0, 0, 0)
        pair.step(seed + 4)
    assert counting.take() == expected
    pair.step(seed + 5)
    assert counting.take() == STEADY


def test_grad_scaler_steps_stay_prepared(rng, counting):
    """Under a GradScaler (its scale and found-inf tensors given each step, moving) the 8-bit
    launch stays prepared; a skipped step changes nothing; bit for bit the reference."""
    seed = seed_of(rng)
    pair = Pair(seed)
    scalers = [torch.amp.GradScaler("cpu", init_scale=2.0 ** 4) for _ in range(2)]
    for k in range(6):
        for ps, opt, scaler in zip(pair.params, pair.opts, scalers):
            set_grads(ps, seed + k)
            for p in ps:
                p.grad = scaler.scale(p.grad)
                if k == 3:
                    p.grad[..., 0] = float("inf")  # this step is skipped
            before = [p.detach().clone() for p in ps]
            scaler.step(opt)
            scaler.update()
            if k == 3:
                assert all(torch.equal(p, q) for p, q in zip(ps, before))
        for pa, pb in zip(*pair.params):
            assert torch.equal(pa, pb)
            for key, value in pair.opts[0].state[pa].items():
                assert torch.equal(value, pair.opts[1].state[pb][key]), key
    made, ran, refused = counting.take()
    assert made <= 2 and ran >= 4 and refused == 0
