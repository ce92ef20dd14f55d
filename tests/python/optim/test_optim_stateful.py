"""FusedEmaAdamW as a state machine (issue 52 item 2): hypothesis runs random sequences of what
training code does to an optimizer, and after every rule the optimizer's parameters, moments and
EMA equal a float64 model of AdamW + EMA (``golden.reference_entry`` per parameter, the decay
schedule and the step counts written out here from docs/OPTIMIZER.md), judged by CANN's precision
standard (``golden.cann_precision``), and the kernel's fp32 golden (``golden.emulate_entry``; with
8-bit moments ``golden8bit.emulate_entry8``) bit for bit. ``AEA_STATEFUL_EXAMPLES``: how many
sequences run (300; ``make fuzz`` runs more, fresh ones).

The model knows nothing of the optimizer's caches: a prepared launch, a launch-cache entry or a
kept decay that served stale state (an old tensor after ``p.data`` is replaced, the old lr or
decay after they change, the old state after a load) shows as a mismatch.
"""

import math
import os
import warnings

import numpy as np
import pytest
import torch
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ascend_ema_adam import golden, golden8bit
from ascend_ema_adam.optim import FusedEmaAdamW, to_torch_state_dict

# (the optimizer says when a state_bits=8 group has no parameter large enough for 8 bits)
pytestmark = pytest.mark.filterwarnings("ignore:state_bits=8. none of:UserWarning")

SHAPES = ((7,), (3, 5), (300,), (2, 2, 3))
MIN_8BIT_SIZE = 64  # (with state_bits=8 the (300,) parameters keep 8-bit moments, the others fp32)
QMAP_M, QMAP_V = golden8bit.dynamic_map(True), golden8bit.dynamic_map(False)


class Trajectory:
    """One parameter's weights, moments and EMA in one dtype (None: not made yet); with 8-bit
    moments, m and v are the codes and m_absmax, v_absmax the block scales."""

    def __init__(self, value, dtype):
        self.dtype = dtype
        self.p = np.asarray(value).astype(dtype)
        self.m = self.v = self.max_v = self.s = self.m_absmax = self.v_absmax = None

    def requantized(self) -> None:
        """8-bit moments decoded to fp32 and quantized again (a load of decoded moments)."""
        for codes, scales, qmap in (("m", "m_absmax", QMAP_M), ("v", "v_absmax", QMAP_V)):
            decoded = golden8bit.decode(getattr(self, codes), getattr(self, scales), qmap)
            new_codes, new_scales = golden8bit.quantize(decoded, qmap, second_moment=codes == "v")
            setattr(self, codes, new_codes.reshape(self.p.shape))
            setattr(self, scales, new_scales)


class Model:
    """One parameter's float64 trajectory (``golden.reference_entry``) and, beside it, the
    kernel's fp32 one (``golden.emulate_entry``), which the optimizer must equal bit for bit.
    A clipped step's coefficient is computed on the device from the gradients' norm: the fp32
    trajectory takes the optimizer's values after it (the float64 one still judges it). With
    8-bit moments (``eight``) the exact trajectory is the 8-bit operator's
    (``golden8bit.emulate_entry8``) and there is no float64 one: quantized moments leave it."""

    def __init__(self, value, eight: bool = False):
        self.eight = eight
        self.wide = None if eight else Trajectory(value, np.float64)
        self.exact = Trajectory(value, np.float32)
        self.step = 0

    @property
    def tiers(self):
        return (self.exact,) if self.eight else (self.wide, self.exact)

    def start_state(self, amsgrad: bool) -> None:
        for t in self.tiers:
            if self.eight:  # (zero moments, quantized)
                zero = np.zeros(t.p.size, np.float32)
                for codes, scales, qmap in (("m", "m_absmax", QMAP_M), ("v", "v_absmax", QMAP_V)):
                    new_codes, new_scales = golden8bit.quantize(zero, qmap)
                    setattr(t, codes, new_codes.reshape(t.p.shape))
                    setattr(t, scales, new_scales)
                continue
            t.m, t.v = np.zeros_like(t.p), np.zeros_like(t.p)
            t.max_v = np.zeros_like(t.p) if amsgrad else None

    def start_ema(self) -> None:
        for t in self.tiers:
            t.s = t.p.copy()  # an EMA starts from the weights

    def drop_ema(self) -> None:
        for t in self.tiers:
            t.s = None

    def set_weights(self, value) -> None:
        for t in self.tiers:
            t.p = np.asarray(value).astype(t.dtype)

    def take(self, p, state) -> None:
        """The fp32 trajectory from the optimizer's values."""
        t = self.exact
        if self.eight:
            t.p, t.m, t.v, t.m_absmax, t.v_absmax = (x.detach().numpy().copy() for x in (
                p, *(state[key] for key in ("exp_avg_codes", "exp_avg_sq_codes",
                                            "exp_avg_absmax", "exp_avg_sq_absmax"))))
        else:
            t.p, t.m, t.v = (x.detach().numpy().copy() for x in (p, state["exp_avg"],
                                                                  state["exp_avg_sq"]))
        if t.max_v is not None:
            t.max_v = state["max_exp_avg_sq"].numpy().copy()
        if t.s is not None:
            t.s = state["ema_params"].numpy().copy()

    # (the first trajectory is the model's default view)
    p = property(lambda self: self.tiers[0].p)
    m = property(lambda self: self.tiers[0].m)
    s = property(lambda self: self.tiers[0].s)


class FusedEmaAdamWMachine(RuleBasedStateMachine):

    def __init__(self):
        super().__init__()
        self.threads_at_start = torch.get_num_threads()  # (set_threads changes them)

    @initialize(config=st.fixed_dictionaries({
        "lr": st.sampled_from((1e-3, 1e-2, 0.05)),
        "betas": st.sampled_from(((0.9, 0.999), (0.8, 0.95), (0.0, 0.5))),
        "eps": st.sampled_from((1e-8, 1e-3)),
        "weight_decay": st.sampled_from((0.0, 0.01, 0.1)),
        "adam_w_mode": st.booleans(), "bias_correction": st.booleans(),
        "maximize": st.booleans(), "amsgrad": st.booleans(),
        "ema_decay": st.sampled_from((0.5, 0.9, 0.999)),
        "use_num_updates": st.booleans(),
        "step_scope": st.sampled_from(("param", "group")),
        "ema_warmup": st.sampled_from(("num_updates", "power", None)),
        "inv_gamma": st.sampled_from((1.0, 3.0)), "power": st.sampled_from((2.0 / 3.0, 0.75)),
        "min_ema_decay": st.sampled_from((0.0, 0.3)),
        "ema_update_after_step": st.sampled_from((0, 2)),
        "ema_every": st.sampled_from((1, 2, 3)),
        "ema_every_decay": st.sampled_from(("power", "once")),
        "state_bits": st.sampled_from((32, 8)),
        "shapes": st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
        "seed": st.integers(0, 2**32 - 1)}))
    def start(self, config):
        self.gen = torch.Generator().manual_seed(config.pop("seed"))
        shapes = config.pop("shapes")
        if not config["use_num_updates"]:  # (the counter is off: no warm-up to choose)
            config.update(ema_warmup="num_updates", ema_update_after_step=0)
        if config["state_bits"] == 8:
            config.update(amsgrad=False, min_8bit_size=MIN_8BIT_SIZE)  # (8 bits: no AMSGrad)
        self.config = config
        self.group_scope = config["step_scope"] == "group"
        self.group_steps = [0]  # step_scope="group": each group's step, by position
        self.ema_calls = [0]  # ema_every > 1: each group's step() calls while it has an EMA
        self.params = [torch.nn.Parameter(torch.randn(s, generator=self.gen)) for s in shapes]
        self.models = [self.new_model(p) for p in self.params]
        self.optimizer = FusedEmaAdamW(self.params, **config)
        self.n = 0  # the warm-up counter (num_updates)

    # -- the model

    def new_model(self, p) -> Model:
        return Model(p.detach().numpy(),
                     eight=self.config["state_bits"] == 8 and p.numel() >= MIN_8BIT_SIZE)

    def decay(self, ema_decay: float) -> float:
        """This step's decay: with m = n - ema_update_after_step, 0 (a copy) while m <= 0, then
        MindSpeed's warm-up min(d, (1+m)/(10+m)), the power warm-up min(d, 1 - (1 +
        m/inv_gamma)^-power) or the constant; at least min_ema_decay."""
        c = self.config
        if not c["use_num_updates"]:
            return max(ema_decay, c["min_ema_decay"])
        m = self.n - c["ema_update_after_step"]
        if m <= 0:
            return 0.0
        if c["ema_warmup"] is None:
            decay = ema_decay
        elif c["ema_warmup"] == "num_updates":
            decay = min(ema_decay, (1.0 + m) / (10.0 + m))
        else:
            decay = min(ema_decay, 1.0 - (1.0 + m / c["inv_gamma"]) ** -c["power"])
        return max(decay, c["min_ema_decay"])

    def group_index(self, i) -> int:
        return next(k for k, g in enumerate(self.optimizer.param_groups)
                    if any(q is self.params[i] for q in g["params"]))

    def group_of(self, i) -> dict:
        return self.optimizer.param_groups[self.group_index(i)]

    def model_state(self, i):
        """Parameter i's state as its first step() makes it, even a step a GradScaler then
        skips: zero moments, the EMA a copy of the weights."""
        model, group = self.models[i], self.group_of(i)
        if model.m is None:
            model.start_state(self.config["amsgrad"])
        ema_decay = group["ema_decay"]  # (the group's: set below, or a new group's default)
        if ema_decay is None:
            model.drop_ema()
        elif model.s is None:
            model.start_ema()

    def model_step(self, i, grad):
        self.model_state(i)
        model, group = self.models[i], self.group_of(i)
        ema_decay = group["ema_decay"]
        model.step += 1
        step = self.group_steps[self.group_index(i)] if self.group_scope else model.step
        beta1, beta2 = group["betas"]
        decay = self.decay(ema_decay) if model.s is not None else 0.0
        # ema_every=k: the EMA on every k-th call ("power", with the decay to the k-th power) or
        # on calls 1, k+1, 2k+1, ... ("once"); the other steps leave it alone
        k, calls = self.config["ema_every"], self.ema_calls[self.group_index(i)]
        once = self.config["ema_every_decay"] == "once"
        ema_on = k == 1 or (calls - 1 if once else calls) % k == 0
        if k > 1 and not once:
            decay = decay**k
        h = golden.Hyper(lr=float(group["lr"]), ema_decay=decay, beta1=beta1, beta2=beta2,
                         eps=group["eps"],
                         mode=1 if self.config["adam_w_mode"] else 0,
                         bias_correction=self.config["bias_correction"],
                         weight_decay=group["weight_decay"])
        extras = golden.Extras(maximize=self.config["maximize"])
        if model.eight:
            t = model.exact
            out = golden8bit.emulate_entry8(grad.astype(np.float32), t.p, t.m, t.v, t.m_absmax,
                                            t.v_absmax, t.s if ema_on else None,
                                            np.array([step]), QMAP_M, QMAP_V, h, extras)
            t.p, t.m, t.v, t.m_absmax, t.v_absmax = (out.var, out.m, out.v, out.m_absmax,
                                                     out.v_absmax)
            t.s = out.s if ema_on else t.s
            return
        for t, entry in ((model.wide, golden.reference_entry),
                         (model.exact, golden.emulate_entry)):
            out = entry(grad.astype(t.dtype), t.p, t.m, t.v, t.s if ema_on else None,
                        np.array([step]), h, extras, max_v=t.max_v)
            t.p, t.m, t.v, t.max_v = out.var, out.m, out.v, out.max_v
            t.s = out.s if ema_on else t.s

    # -- the rules

    def set_grads(self, which, in_place, scale=1.0):
        """Fresh gradients (times `scale`) for the parameters `which` picks, None for the
        others; returns the unscaled ones (None where absent)."""
        grads = []
        for p, has in zip(self.params, which + [True] * len(self.params)):
            if not has:
                p.grad = None
                grads.append(None)
                continue
            g = torch.randn(p.shape, generator=self.gen)
            if in_place and p.grad is not None:
                p.grad.copy_(g * scale)
            else:
                p.grad = g * scale
            grads.append(g.numpy().astype(np.float64))
        return grads

    def model_steps(self, grads):
        """Without any gradient a step is a no-op, as torch's; with step_scope="group" it counts
        (the warm-up counter and every group's step), as MindSpeed's; so does a group without
        gradients in a step that has some."""
        if any(g is not None for g in grads) or self.group_scope:
            self.n += 1
            self.group_steps = [k + 1 for k in self.group_steps]
            self.count_ema_calls()
        for i, g in enumerate(grads):
            if g is not None:
                self.model_step(i, g)

    def count_ema_calls(self):
        """ema_every's clock: each group's step() calls while it has an EMA (on the host: a step
        a GradScaler skips counts too)."""
        for g, group in enumerate(self.optimizer.param_groups):
            if self.config["ema_every"] > 1 and group["ema_decay"] is not None:
                self.ema_calls[g] += 1

    @rule(which=st.lists(st.booleans(), min_size=3, max_size=3), in_place=st.booleans())
    def step(self, which, in_place):
        """A step; some parameters without a gradient (they keep their state and step)."""
        grads = self.set_grads(which, in_place)
        self.checked_step(grads, self.optimizer.step)
        self.model_steps(grads)

    def checked_step(self, grads, step):
        """``step()``, which warns exactly when it counts a step without any gradient."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            step()
        warned = [w for w in caught if "no parameter has a gradient" in str(w.message)]
        assert len(warned) == (self.group_scope and all(g is None for g in grads)), [
            str(w.message) for w in caught]

    @rule(which=st.lists(st.booleans(), min_size=3, max_size=3), inf=st.booleans())
    def scaled_step(self, which, inf):
        """Under torch.amp.GradScaler (power-of-two scales: unscaling is exact); an inf
        gradient skips the step: nothing written, no counter moves."""
        if not hasattr(self, "scaler"):
            self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
        self.scaler.scale(torch.ones(()))  # (what scaling the loss does first: makes the scale)
        which = [True] + which[1:]  # (GradScaler refuses a step without any gradient)
        grads = self.set_grads(which, False, self.scaler.get_scale())
        if inf:
            next(p for p in self.params if p.grad is not None).grad.view(-1)[0] = math.inf
        self.scaler.step(self.optimizer)
        self.scaler.update()
        if not inf:
            self.model_steps(grads)
            return
        self.count_ema_calls()
        for i, g in enumerate(grads):
            if g is not None:
                self.model_state(i)

    @rule(which=st.lists(st.booleans(), min_size=3, max_size=3),
          max_norm=st.sampled_from((0.1, 1.0, 100.0)))
    def clipped_step(self, which, max_norm):
        """clip_grad_norm_ fused into the step: torch's coefficient max_norm / (norm + 1e-6),
        at most 1."""
        grads = self.set_grads(which, False)
        self.optimizer.clip_grad_norm_(max_norm)
        self.checked_step(grads, self.optimizer.step)
        given = [g for g in grads if g is not None]
        norm = math.sqrt(sum(float((g * g).sum()) for g in given))
        coefficient = min(1.0, max_norm / (norm + 1e-6))
        self.model_steps([None if g is None else g * coefficient for g in grads])
        for p, model, g in zip(self.params, self.models, grads):
            if g is not None:
                model.take(p, self.optimizer.state[p])

    @rule(set_to_none=st.booleans())
    def zero_grad(self, set_to_none):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    @rule(i=st.integers(0, 2))
    def replace_data(self, i):
        """``p.data = ...``: a new tensor under the same parameter."""
        p = self.params[i % len(self.params)]
        p.data = torch.randn(p.shape, generator=self.gen)
        self.models[i % len(self.params)].set_weights(p.detach().numpy())

    @rule(lr=st.sampled_from((1e-3, 3e-3, 0.02)), as_tensor=st.booleans(), group=st.integers(0, 1))
    def set_lr(self, lr, as_tensor, group):
        """A group's lr changed, as a scheduler does (or a one-element fp32 tensor)."""
        groups = self.optimizer.param_groups
        groups[group % len(groups)]["lr"] = torch.tensor(lr) if as_tensor else lr

    @rule()
    def scheduler_step(self):
        """A scheduler object's step (LambdaLR, 0.8 per call, from the lr it found)."""
        # A new one for a new optimizer (a reload) or a new group (torch's schedulers keep the
        # groups they were made with).
        scheduled = (self.optimizer, len(self.optimizer.param_groups))
        if getattr(self, "scheduled", None) != scheduled:
            self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda k: 0.8**k)
            self.scheduled = scheduled
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Detected call of `lr_scheduler.step\\(\\)` before")
            self.scheduler.step()

    @precondition(lambda self: len(self.params) < 5)
    @rule(shape=st.sampled_from(SHAPES), lr=st.sampled_from((1e-3, 0.02)))
    def add_param_group(self, shape, lr):
        p = torch.nn.Parameter(torch.randn(shape, generator=self.gen))
        self.optimizer.add_param_group({"params": [p], "lr": lr})
        self.group_steps.append(0)
        self.ema_calls.append(0)
        self.params.append(p)
        self.models.append(self.new_model(p))

    @rule(decay=st.sampled_from((None, 0.7, 0.95)))
    def set_ema_decay(self, decay):
        """None drops the EMA; a decay again starts a new one from the weights."""
        self.optimizer.ema_decay = decay
        if decay is None:
            for model in self.models:
                model.drop_ema()

    @rule()
    def reload_into_a_fresh_optimizer(self):
        state = self.optimizer.state_dict()
        fresh = FusedEmaAdamW([{"params": g["params"]} for g in self.optimizer.param_groups],
                              **self.config)
        fresh.load_state_dict(state)
        self.use_loaded(fresh)

    def use_loaded(self, fresh):
        """Go on with an optimizer that loaded this one's state. Its EMA choice wins (its decay
        where the saved group has none): a parameter with moments but no EMA gets its weights."""
        self.optimizer = fresh
        for i, model in enumerate(self.models):
            has_ema = self.group_of(i)["ema_decay"] is not None
            if model.m is not None and model.s is None and has_ema:
                model.start_ema()

    @precondition(lambda self: self.config["adam_w_mode"] and not self.group_scope)
    @rule()
    def reload_through_torch_adamw(self):
        """Our state dict into torch.optim.AdamW (to_torch_state_dict), torch's back into a
        fresh FusedEmaAdamW: torch keeps the EMA and our group keys, nothing is lost."""
        groups = [{"params": g["params"]} for g in self.optimizer.param_groups]
        torch_adamw = torch.optim.AdamW(groups)
        torch_adamw.load_state_dict(to_torch_state_dict(self.optimizer.state_dict()))
        fresh = FusedEmaAdamW([{"params": g["params"]} for g in groups], **self.config)
        fresh.load_state_dict(torch_adamw.state_dict())
        self.use_loaded(fresh)
        for model in self.models:  # (torch's dict holds 8-bit moments decoded)
            if model.eight and model.m is not None:
                model.exact.requantized()

    @rule(threads=st.integers(1, 2))
    def set_threads(self, threads):
        torch.set_num_threads(threads)

    @precondition(lambda self: any(m.s is not None for m in self.models))
    @rule()
    def swap_ema(self):
        """Inside, the parameters hold their EMA (the fp32 golden's bits); after, their own
        weights, bit for bit."""
        before = [p.detach().clone() for p in self.params]
        with self.optimizer.swap_ema():
            for p, model, b in zip(self.params, self.models, before):
                if model.s is not None:
                    assert np.array_equal(p.detach().numpy(), model.exact.s)
                else:
                    assert torch.equal(p, b)
        assert all(torch.equal(p, b) for p, b in zip(self.params, before))

    # -- the invariant

    @invariant()
    def matches_the_model(self):
        if not hasattr(self, "optimizer"):
            return
        for i, (p, model) in enumerate(zip(self.params, self.models)):
            state = self.optimizer.state.get(p, {})
            # (name, the optimizer's, the float64 model's or None, the fp32 golden's)
            wide = model.wide if model.wide is not None else Trajectory(np.zeros(0), np.float64)
            exact = model.exact
            pairs = [("param", p.detach().numpy(), wide.p, exact.p)]
            if model.eight and model.m is not None:
                pairs += [(key, state[key].numpy(), None, value) for key, value in (
                    ("exp_avg_codes", exact.m), ("exp_avg_sq_codes", exact.v),
                    ("exp_avg_absmax", exact.m_absmax), ("exp_avg_sq_absmax", exact.v_absmax))]
                assert "exp_avg" not in state, i
            elif model.m is not None:
                pairs += [("exp_avg", state["exp_avg"].numpy(), wide.m, exact.m),
                          ("exp_avg_sq", state["exp_avg_sq"].numpy(), wide.v, exact.v)]
                if wide.max_v is not None:
                    pairs.append(("max_exp_avg_sq", state["max_exp_avg_sq"].numpy(),
                                  wide.max_v, exact.max_v))
            if model.m is not None:
                if self.group_scope:
                    assert "step" not in state, i
                else:
                    assert int(state["step"]) == model.step, (i, int(state["step"]), model.step)
            if model.s is not None:
                pairs.append(("ema_params", state["ema_params"].numpy(), wide.s, exact.s))
            else:
                assert "ema_params" not in state, i
            if model.eight:  # (8-bit moments leave the float64 model: the 8-bit golden alone)
                pairs = [(name, actual, None, emulated) for name, actual, _, emulated in pairs]
            for name, actual, expected, emulated in pairs:
                if expected is not None:
                    precision = golden.cann_precision(actual, expected)
                    assert precision.passed, (i, name, precision)
                assert actual.dtype == emulated.dtype and np.array_equal(actual, emulated), (
                    i, name, "not the golden's bits")
        if self.group_scope:
            for k, group in enumerate(self.optimizer.param_groups):
                counted = int(group["step"]) if "step" in group else 0
                assert counted == self.group_steps[k], (k, counted, self.group_steps[k])

    def teardown(self):
        torch.set_num_threads(self.threads_at_start)


FusedEmaAdamWMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("AEA_STATEFUL_EXAMPLES", "300")), stateful_step_count=25,
    deadline=None)
test_fused_ema_adamw_follows_the_float64_model = FusedEmaAdamWMachine.TestCase

