"""Phase-2-only steps (issue 21): a cached group of FusedEmaAdamW on the CPU launches through its
prepared launches (_C.ApplyFusedEmaAdamListLaunch: CANN's repeatable executors), prepared once and
run again while nothing phase 1 checked has changed. Here: ApplyFusedEmaAdamListLaunch itself (what
run() accepts, what makes it refuse, and that a refusal writes nothing), then the optimizer through
every change that must prepare again (or must not), bit for bit an optimizer that checks and
launches through the op at every step."""

import types

import pytest
import torch

import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from ascend_ema_adam import _C
from ascend_ema_adam.ops import apply_fused_ema_adam_list
from ascend_ema_adam.optim import FusedEmaAdamW

HYPER = (0.9, 0.999, 1e-8, 1, True, 0.01)  # beta1, beta2, eps, mode, bias_correction, wd


def seed_of(rng):
    return int(rng.integers(2**31))


# ------------------------------------------------------------------------------------------
# _C.ApplyFusedEmaAdamListLaunch


def lists(gen, shapes, dtype=torch.float32):
    def one():
        return [torch.randn(s, generator=gen).to(dtype) for s in shapes]
    grads, vars, ms, ss = one(), one(), one(), one()
    vs = [torch.rand(s, generator=gen).to(dtype) for s in shapes]
    return grads, vars, ms, vs, ss


def clone_all(*groups):
    return [[t.clone() for t in g] for g in groups]


def assert_equal_lists(a, b):
    for xs, ys in zip(a, b):
        assert all(torch.equal(x, y) for x, y in zip(xs, ys))


SHAPES = [(5, 3), (0,), (1,), (33,), (2, 2, 2), (300,)] * 60  # 360 entries: two launches


def test_list_launch_runs_again_bit_for_bit_the_op(rng):
    """Five runs with new gradients, step tensors, lr and decay values each time (and a grad
    scale whose tensor moves): the op's bits; the same with the EMA off."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    for ema in (True, False):
        grads, *state = lists(gen, SHAPES)
        reference = clone_all(*state)
        step = torch.tensor([1])
        scale = torch.tensor([4.0])
        launch = _C.ApplyFusedEmaAdamListLaunch(grads, *state[:3], state[3] if ema else [], [], [],
                                                step, scale, None, 1e-3, 0.99, *HYPER, True)
        assert launch.launches == 2
        for k in range(1, 6):
            grads = [torch.randn(s, generator=gen) for s in SHAPES]
            step, scale = torch.tensor([k]), torch.tensor([float(2 ** k)])
            lr, decay = 1e-3 * k, 0.9 + 0.01 * k
            assert launch.run(grads, step, lr, decay, scale, None)
            apply_fused_ema_adam_list(grads, *reference[:3], reference[3] if ema else None,
                                      step, lr, decay, *HYPER, grad_scale=scale, maximize=True)
            assert_equal_lists(state, reference)


def refusals():
    """(what changes, a function (launch inputs) -> run() arguments after the change)."""
    def replaced_var(x):
        x["vars"][3].data = x["vars"][3].clone()
    def reshaped_grad(x):
        x["grads"][0] = x["grads"][0].reshape(-1)
    def grad_dtype(x):
        x["grads"][2] = x["grads"][2].double()
    def fewer_grads(x):
        x["grads"].pop()
    def grad_aliases_state(x):
        x["grads"][3] = x["ms"][3]
    def grad_inside_ema(x):
        x["grads"][2] = x["ss"][3][7:8]
    def step_zero(x):
        x["step"] = torch.tensor([0])
    def step_overlaps(x):
        x["step"] = x["ms"][0].view(-1)[:2].view(torch.int64)
    def scale_given(x):
        x["scale"] = torch.tensor([2.0])
    return {"var replaced": replaced_var, "grad reshaped": reshaped_grad,
            "grad dtype": grad_dtype, "fewer grads": fewer_grads,
            "grad aliases a moment": grad_aliases_state, "grad inside an EMA": grad_inside_ema,
            "step 0 with bias correction": step_zero, "step inside a moment": step_overlaps,
            "grad scale given": scale_given}


@pytest.mark.parametrize("change", list(refusals()))
def test_list_launch_refuses_what_phase_1_did_not_check(rng, change):
    """run() returns False and writes nothing when anything phase 1 checked has changed; the
    call then prepared from scratch is refused (or runs) as the op does."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    shapes = [(5, 3), (4,), (1,), (33,)]
    grads, vars, ms, vs, ss = lists(gen, shapes)
    step = torch.tensor([1])
    launch = _C.ApplyFusedEmaAdamListLaunch(grads, vars, ms, vs, ss, [], [], step, None, None, 1e-3,
                                            0.99, *HYPER, False)
    assert launch.run(grads, step, 1e-3, 0.99, None, None)
    x = dict(grads=[torch.randn(s, generator=gen) for s in shapes], vars=vars, ms=ms, vs=vs,
             ss=ss, step=torch.tensor([2]), scale=None)
    refusals()[change](x)
    before = clone_all(vars, ms, vs, ss)
    assert not launch.run(x["grads"], x["step"], 1e-3, 0.99, x["scale"], None)
    assert_equal_lists([vars, ms, vs, ss], before)
    # and unchanged, it still runs: a refusal leaves the launch as it was
    same = [torch.randn(s, generator=gen) for s in shapes]
    reference = clone_all(vars, ms, vs, ss)
    if change == "var replaced":  # for good: the launch no longer describes this call
        assert not launch.run(same, torch.tensor([2]), 1e-3, 0.99, None, None)
        assert_equal_lists([vars, ms, vs, ss], before)
        return
    assert launch.run(same, torch.tensor([2]), 1e-3, 0.99, None, None)
    apply_fused_ema_adam_list(same, *reference, torch.tensor([2]), 1e-3, 0.99, *HYPER)
    assert_equal_lists([vars, ms, vs, ss], reference)


def test_list_launch_is_validated_as_the_op_is(rng):
    """The constructor raises the op's errors (here: an overlap, named as the op names it);
    run() refuses a gradient list holding something else than tensors, writing nothing."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    grads, vars, ms, vs, ss = lists(gen, [(8,), (8,)])
    step = torch.tensor([1])
    with pytest.raises(RuntimeError, match=r"msRef\[1\] and vsRef\[1\] overlap in memory"):
        _C.ApplyFusedEmaAdamListLaunch(grads, vars, ms, [vs[0], ms[1]], ss, [], [], step, None,
                                       None, 1e-3, 0.99, *HYPER, False)
    launch = _C.ApplyFusedEmaAdamListLaunch(grads, vars, ms, vs, ss, [], [], step, None, None, 1e-3,
                                            0.99, *HYPER, False)
    before = clone_all(vars, ms, vs, ss)
    with pytest.raises(TypeError, match=r"grads\[1\] is a numpy.ndarray, not a tensor"):
        launch.run([grads[0], grads[1].numpy()], step, 1e-3, 0.99, None, None)
    assert_equal_lists([vars, ms, vs, ss], before)


# ------------------------------------------------------------------------------------------
# FusedEmaAdamW: prepared once, run again, prepared again after a change


class Counting:
    """_C for the optimizer's launches: counts ApplyFusedEmaAdamListLaunch constructions and runs
    (refused runs apart)."""

    def __init__(self):
        self.made = self.ran = self.refused = 0
        counter = self

        class ApplyFusedEmaAdamListLaunch(_C.ApplyFusedEmaAdamListLaunch):
            def __init__(self, *args):
                counter.made += 1
                super().__init__(*args)

            def run(self, *args):
                ok = super().run(*args)
                counter.ran += ok
                counter.refused += not ok
                return ok

        self.module = types.SimpleNamespace(ApplyFusedEmaAdamListLaunch=ApplyFusedEmaAdamListLaunch)

    def take(self):
        seen = (self.made, self.ran, self.refused)
        self.made = self.ran = self.refused = 0
        return seen


@pytest.fixture
def counting(monkeypatch):
    c = Counting()
    monkeypatch.setattr(optim_module, "_C", c.module)
    return c


def make_params(seed, n=9):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(5, 3), (1,), (33,), (2, 2, 2), (17,), (4, 9), (0,), (7,), (3, 3)]
    return [torch.nn.Parameter(torch.randn(shapes[k % len(shapes)], generator=gen) * 0.1)
            for k in range(n)]


def set_grads(params, seed, skip=()):
    gen = torch.Generator().manual_seed(seed)
    for k, p in enumerate(params):
        p.grad = None if k in skip else (torch.randn(p.shape, generator=gen) * 0.01).to(p.dtype)


class Pair:
    """The optimizer under test and a reference that checks fully and launches through the op at
    every step (no group cache), over parameters with the same values."""

    def __init__(self, seed, monkeypatch, **kwargs):
        self.monkeypatch = monkeypatch
        self.params = [make_params(seed) for _ in range(2)]
        self.opts = [FusedEmaAdamW(ps, lr=0.05, ema_decay=0.9, **kwargs) for ps in self.params]
        self.opts[1]._launch_cache.remember = lambda *args, **kw: False

    def both(self, change):
        for ps, opt in zip(self.params, self.opts):
            change(opt, ps)

    def step(self, seed, skip=()):
        for ps, opt in zip(self.params, self.opts):
            set_grads(ps, seed, skip)
            opt.step()
        self.check()

    def check(self):
        a, b = self.opts
        for ga, gb in zip(a.param_groups, b.param_groups):
            for pa, pb in zip(ga["params"], gb["params"]):
                assert torch.equal(pa, pb)
                assert (pa in a.state) == (pb in b.state)
                for key, value in a.state.get(pa, {}).items():
                    assert torch.equal(value, b.state[pb][key]), key


STEADY = (0, 1, 0)  # a step of a cached group: one launch run, none made, none refused


@pytest.mark.parametrize("scope", ["param", "group"])
def test_steady_steps_are_phase_2_only(rng, monkeypatch, counting, scope):
    """Step 1 checks fully (the op), step 2 prepares the launch, every later step only runs it,
    with new gradients each time, and an lr schedule (lr is a value the launch reads)."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch, step_scope=scope)
    pair.step(seed)
    assert counting.take() == (0, 0, 0)
    pair.step(seed + 1)
    assert counting.take() == (1, 1, 0)
    for k in range(2, 7):
        pair.both(lambda opt, ps: opt.param_groups[0].__setitem__("lr", 0.05 / k))
        pair.step(seed + k)
        assert counting.take() == STEADY


def replace_param(opt, ps):
    ps[2].data = ps[2].detach().clone() + 1


def to_bfloat16(opt, ps):
    ps[3].data = ps[3].detach().to(torch.bfloat16)
    opt.state[ps[3]].clear()


def reload_state(opt, ps):
    opt.load_state_dict(opt.state_dict())


def new_weight_decay(opt, ps):
    opt.param_groups[0]["weight_decay"] = 0.3


def new_betas(opt, ps):
    opt.param_groups[0]["betas"] = (0.8, 0.99)


def add_group(opt, ps):
    opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(4))]})


def scale_state_in_place(opt, ps):
    opt.state[ps[1]]["exp_avg"].mul_(0.5)


# change -> (whether the group is checked fully first, (made, ran, refused) at the cached step
# after it)
CHANGES = {
    "parameter's memory replaced": (True, replace_param, (1, 1, 0)),
    "dtype changed": (True, to_bfloat16, (2, 2, 0)),
    "state reloaded": (True, reload_state, (1, 1, 0)),
    "weight decay changed": (False, new_weight_decay, (1, 1, 0)),
    "betas changed": (False, new_betas, (1, 1, 0)),
    "state written in place": (False, scale_state_in_place, STEADY),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_changes_prepare_again_or_not(rng, monkeypatch, counting, change):
    """After each change the optimizer does what the reference does, bit for bit, and prepares
    again exactly when the change touched what phase 1 checked: a parameter's memory (the
    memory the caches saw no longer holds: every group is checked in full, then cached and
    prepared again), its dtype (two buckets: two launches), reloaded state tensors (a new group
    cache), an attribute of the launch; not for a write into the same memory."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(3):
        pair.step(seed + k)
    counting.take()
    full_first, fn, expected = CHANGES[change]
    pair.both(fn)
    pair.step(seed + 3)
    if full_first:  # new state tensors: the group is checked fully (the op), then cached
        assert counting.take() == (0, 0, 0)
        pair.step(seed + 4)
    assert counting.take() == expected
    pair.step(seed + 5)
    prepared = pair.opts[0]._launch_cache.groups[0].parts[0].prepared
    assert counting.take() == (0, len(prepared.groups), 0)


def test_a_lazily_cloned_parameter_keeps_its_clone(rng, monkeypatch, counting):
    """torch._lazy_clone shares a cached parameter's memory copy-on-write, at the same address:
    the step copies it before writing (its address then changes: the group is checked in full
    and cached again), so the clone keeps the values it had, and the step is the reference's."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(3):
        pair.step(seed + k)
    counting.take()
    before = [ps[2].detach().clone() for ps in pair.params]
    clones = [torch._lazy_clone(ps[2].detach()) for ps in pair.params]
    pair.step(seed + 3)
    assert all(torch.equal(c, b) for c, b in zip(clones, before))
    assert not any(torch.equal(ps[2], b) for ps, b in zip(pair.params, before))
    assert counting.take() == (0, 0, 0)  # checked in full (the op), not a held launch
    pair.step(seed + 4)
    assert counting.take() == (1, 1, 0)


def test_missing_gradient_and_new_group(rng, monkeypatch, counting):
    """A step with a parameter without gradient checks fully (no launch prepared or run); the
    next one is cached again. An added group gets its own launch once cached, and the first
    group keeps its launches."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(3):
        pair.step(seed + k)
    counting.take()
    pair.step(seed + 3, skip=(4,))
    assert counting.take() == (0, 0, 0)
    pair.step(seed + 4)
    assert counting.take() == (0, 0, 0)  # checked fully again, then cached
    pair.step(seed + 5)
    # parameter 4 is a step behind the others now: one launch per step value, every step
    assert counting.take() == (2, 2, 0)
    pair.step(seed + 6)
    assert counting.take() == (0, 2, 0)
    kept = dict(pair.opts[0]._launch_cache.groups[0].parts[0].prepared.launches)
    pair.both(add_group)
    for ps, opt in zip(pair.params, pair.opts):
        opt.param_groups[1]["params"][0].grad = torch.ones(4)
    for k in range(7, 10):
        for opt in pair.opts:
            opt.param_groups[1]["params"][0].grad = torch.full((4,), 0.1 * k)
        pair.step(seed + k)
    made, ran, refused = counting.take()
    assert (made, refused) == (1, 0)  # the new group's: group 0's launches kept running
    # (the same launch objects)
    assert pair.opts[0]._launch_cache.groups[0].parts[0].prepared.launches == kept
    assert pair.opts[0]._launch_cache.groups[1].parts[0].prepared.launches


def test_grad_scaler_skips_and_steps(rng, monkeypatch, counting):
    """Under torch.amp.GradScaler the scale and found-inf tensors move every step; a step with an
    inf gradient is skipped on both optimizers alike, and the launch is not prepared again."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    scalers = [torch.amp.GradScaler("cpu", init_scale=1024.0) for _ in range(2)]
    for k in range(6):
        for ps, opt, scaler in zip(pair.params, pair.opts, scalers):
            set_grads(ps, seed + k)
            scaler.scale(torch.ones(()))  # (makes its scale tensor, as scaling a loss does)
            for p in ps:
                p.grad.mul_(scaler.get_scale())
            if k == 3:
                ps[2].grad[0] = float("inf")
            scaler.step(opt)
            scaler.update()
        pair.check()
    made, ran, refused = counting.take()
    assert made == 1 and refused == 0 and ran >= 3


@pytest.mark.parametrize("skip", [(), (1,)], ids=["all-grads", "one-without"])
def test_gradient_aliasing_state_raises_and_writes_nothing(rng, monkeypatch, counting, skip):
    """A gradient that is a view of the optimizer's own state, after the launch was prepared
    (also in a group cached with a parameter left out): refused as the full check refuses it,
    naming the parameter by its place in the group, before anything is written."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(3):
        pair.step(seed + k, skip=skip)
    opt, ps = pair.opts[0], pair.params[0]
    set_grads(ps, seed + 3, skip=skip)
    ps[5].grad = opt.state[ps[5]]["exp_avg_sq"]
    before = [p.detach().clone() for p in ps]
    with pytest.raises(RuntimeError, match=r"param_groups\[0\]\['params'\]\[5\].*overlap"):
        opt.step()
    assert all(torch.equal(p, b) for p, b in zip(ps, before))


@pytest.mark.parametrize("target", ["the parameter", "state 'exp_avg'"])
def test_new_memory_overlapping_a_gradient_raises_and_writes_nothing(rng, monkeypatch, counting,
                                                                      target):
    """A cached parameter (or state tensor) given new memory that its gradient then overlaps:
    the step raises the overlap, naming it, before any counter or tensor changes (the memory the
    caches saw is re-checked first)."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(3):
        pair.step(seed + k)
    opt, ps = pair.opts[0], pair.params[0]
    n = ps[2].numel()
    buffer = torch.randn(n + 4, generator=torch.Generator().manual_seed(seed))
    moved = ps[2] if target == "the parameter" else opt.state[ps[2]]["exp_avg"]
    moved.data = buffer[:n].view(ps[2].shape)
    set_grads(ps, seed + 3)
    opt.step()  # the new memory, no overlap yet: checked in full, cached again
    set_grads(ps, seed + 4)
    ps[2].grad = buffer[4:].view(ps[2].shape)  # overlaps the moved tensor's new memory
    before = [p.detach().clone() for p in ps]
    states = [{k: v.clone() for k, v in opt.state[p].items()} for p in ps]  # steps included
    num_updates = opt.num_updates
    with pytest.raises(RuntimeError, match=r"param_groups\[0\]\['params'\]\[2\].*overlap"):
        opt.step()
    assert all(torch.equal(p, b) for p, b in zip(ps, before))
    for p, state in zip(ps, states):
        assert opt.state[p].keys() == state.keys()
        assert all(torch.equal(opt.state[p][k], v) for k, v in state.items())
    assert opt.num_updates == num_updates


@pytest.mark.parametrize("scope", ["param", "group"])
def test_a_parameter_without_gradient_keeps_the_fast_path(rng, monkeypatch, counting, scope):
    """A parameter that has no gradient step after step (frozen, or unused by the model): the
    group stays cached with it left out, one launch run per step, the parameter and its state
    untouched; when it gets a gradient again the group is checked fully once."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch, step_scope=scope)
    pair.step(seed)
    frozen = [ps[4].detach().clone() for ps in pair.params]
    pair.step(seed + 1, skip=(4,))  # a new set of gradients: checked fully, cached
    pair.step(seed + 2, skip=(4,))  # prepared
    counting.take()
    for k in range(3, 7):
        pair.step(seed + k, skip=(4,))
        assert counting.take() == STEADY
    assert all(torch.equal(ps[4], f) for ps, f in zip(pair.params, frozen))
    cache = pair.opts[0]._launch_cache.groups[0]
    assert 4 not in cache.indexes and len(cache.indexes) == len(pair.params[0]) - 1
    pair.step(seed + 7)
    assert counting.take() == (0, 0, 0)


def test_an_attribute_schedule_keeps_one_launch_per_bucket(rng, monkeypatch, counting):
    """betas changed at every step (a schedule): each step prepares the bucket's launch again and
    replaces the old one, so the launches kept stay one per bucket; the bits are the reference's."""
    seed = seed_of(rng)
    pair = Pair(seed, monkeypatch)
    for k in range(2):
        pair.step(seed + k)
    counting.take()
    for k in range(2, 7):
        pair.both(lambda opt, ps: opt.param_groups[0].__setitem__("betas", (0.9 - 0.01 * k,
                                                                            0.999)))
        pair.step(seed + k)
        assert counting.take() == (1, 1, 0)
        assert len(pair.opts[0]._launch_cache.groups[0].parts[0].prepared.launches) == 1
