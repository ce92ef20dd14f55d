"""FusedEmaAdamW as a state machine (issue 52 item 2): hypothesis runs random sequences of what
training code does to an optimizer, and after every rule the optimizer's parameters, moments and
EMA equal a float64 model of AdamW + EMA (``golden.reference_entry`` per parameter, the decay
schedule written out here), judged by CANN's precision standard (``golden.cann_precision``).

The model knows nothing of the optimizer's caches: a prepared launch, a launch-cache entry or a
kept decay that served stale state (an old tensor after ``p.data`` is replaced, the old lr or
decay after they change, the old state after a load) shows as a mismatch.
"""

import math

import numpy as np
import torch
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ascend_ema_adam import golden
from ascend_ema_adam.optim import FusedEmaAdamW

SHAPES = ((7,), (3, 5), (300,), (2, 2, 3))


class Model:
    """One parameter's float64 trajectory."""

    def __init__(self, value):
        self.p = value.astype(np.float64)
        self.m = self.v = self.max_v = self.s = None
        self.step = 0


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
        "shapes": st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
        "seed": st.integers(0, 2**32 - 1)}))
    def start(self, config):
        self.gen = torch.Generator().manual_seed(config.pop("seed"))
        shapes = config.pop("shapes")
        self.config = config
        self.params = [torch.nn.Parameter(torch.randn(s, generator=self.gen)) for s in shapes]
        self.models = [Model(p.detach().numpy()) for p in self.params]
        self.optimizer = FusedEmaAdamW(self.params, **config)
        self.n = 0  # the warm-up counter (num_updates)

    # -- the model

    def decay(self, ema_decay: float) -> float:
        """This step's decay: MindSpeed's warm-up min(d, (1+n)/(10+n)) or the constant."""
        if not self.config["use_num_updates"]:
            return ema_decay
        return min(ema_decay, (1.0 + self.n) / (10.0 + self.n))

    def group_of(self, i) -> dict:
        return next(g for g in self.optimizer.param_groups
                    if any(q is self.params[i] for q in g["params"]))

    def model_state(self, i):
        """Parameter i's state as its first step() makes it, even a step a GradScaler then
        skips: zero moments, the EMA a copy of the weights."""
        model, group = self.models[i], self.group_of(i)
        if model.m is None:
            model.m, model.v = np.zeros_like(model.p), np.zeros_like(model.p)
            if self.config["amsgrad"]:
                model.max_v = np.zeros_like(model.p)
        ema_decay = group["ema_decay"]  # (the group's: set below, or a new group's default)
        if ema_decay is None:
            model.s = None
        elif model.s is None:
            model.s = model.p.copy()  # an EMA starts from the weights

    def model_step(self, i, grad):
        self.model_state(i)
        model, group = self.models[i], self.group_of(i)
        ema_decay = group["ema_decay"]
        model.step += 1
        beta1, beta2 = group["betas"]
        decay = self.decay(ema_decay) if model.s is not None else 0.0
        h = golden.Hyper(lr=float(group["lr"]), ema_decay=decay, beta1=beta1, beta2=beta2,
                         eps=group["eps"],
                         mode=1 if self.config["adam_w_mode"] else 0,
                         bias_correction=self.config["bias_correction"],
                         weight_decay=group["weight_decay"])
        out = golden.reference_entry(grad.astype(np.float64), model.p, model.m, model.v, model.s,
                                     np.array([model.step]), h,
                                     golden.Extras(maximize=self.config["maximize"]),
                                     max_v=model.max_v)
        model.p, model.m, model.v, model.s, model.max_v = (out.var, out.m, out.v, out.s,
                                                           out.max_v)

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
        if any(g is not None for g in grads):  # (without any gradient: a no-op, as torch's)
            self.n += 1
        for i, g in enumerate(grads):
            if g is not None:
                self.model_step(i, g)

    @rule(which=st.lists(st.booleans(), min_size=3, max_size=3), in_place=st.booleans())
    def step(self, which, in_place):
        """A step; some parameters without a gradient (they keep their state and step)."""
        grads = self.set_grads(which, in_place)
        self.optimizer.step()
        self.model_steps(grads)

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
        self.optimizer.step()
        given = [g for g in grads if g is not None]
        norm = math.sqrt(sum(float((g * g).sum()) for g in given))
        coefficient = min(1.0, max_norm / (norm + 1e-6))
        self.model_steps([None if g is None else g * coefficient for g in grads])

    @rule(set_to_none=st.booleans())
    def zero_grad(self, set_to_none):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    @rule(i=st.integers(0, 2))
    def replace_data(self, i):
        """``p.data = ...``: a new tensor under the same parameter."""
        p = self.params[i % len(self.params)]
        p.data = torch.randn(p.shape, generator=self.gen)
        self.models[i % len(self.params)].p = p.detach().numpy().astype(np.float64)

    @rule(lr=st.sampled_from((1e-3, 3e-3, 0.02)), as_tensor=st.booleans(), group=st.integers(0, 1))
    def set_lr(self, lr, as_tensor, group):
        """A group's lr changed, as a scheduler does (or a one-element fp32 tensor)."""
        groups = self.optimizer.param_groups
        groups[group % len(groups)]["lr"] = torch.tensor(lr) if as_tensor else lr

    @precondition(lambda self: len(self.params) < 5)
    @rule(shape=st.sampled_from(SHAPES), lr=st.sampled_from((1e-3, 0.02)))
    def add_param_group(self, shape, lr):
        p = torch.nn.Parameter(torch.randn(shape, generator=self.gen))
        self.optimizer.add_param_group({"params": [p], "lr": lr})
        self.params.append(p)
        self.models.append(Model(p.detach().numpy()))

    @rule(decay=st.sampled_from((None, 0.7, 0.95)))
    def set_ema_decay(self, decay):
        """None drops the EMA; a decay again starts a new one from the weights."""
        self.optimizer.ema_decay = decay
        if decay is None:
            for model in self.models:
                model.s = None

    @rule()
    def reload_into_a_fresh_optimizer(self):
        state = self.optimizer.state_dict()
        fresh = FusedEmaAdamW([{"params": g["params"]} for g in self.optimizer.param_groups],
                              **self.config)
        fresh.load_state_dict(state)
        self.optimizer = fresh
        # the loading optimizer's EMA choice wins (its decay where the saved group has none);
        # a parameter with moments but no EMA gets its weights
        for i, model in enumerate(self.models):
            has_ema = self.group_of(i)["ema_decay"] is not None
            if model.m is not None and model.s is None and has_ema:
                model.s = model.p.copy()

    @rule(threads=st.integers(1, 2))
    def set_threads(self, threads):
        torch.set_num_threads(threads)

    @precondition(lambda self: any(m.s is not None for m in self.models))
    @rule()
    def swap_ema(self):
        """Inside, the parameters hold their EMA; after, their own weights, bit for bit."""
        before = [p.detach().clone() for p in self.params]
        with self.optimizer.swap_ema():
            for p, model, b in zip(self.params, self.models, before):
                if model.s is not None:
                    assert golden.cann_precision(p.detach().numpy(), model.s).passed
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
            pairs = [("param", p.detach().numpy(), model.p)]
            if model.m is not None:
                pairs += [("exp_avg", state["exp_avg"].numpy(), model.m),
                          ("exp_avg_sq", state["exp_avg_sq"].numpy(), model.v)]
                if model.max_v is not None:
                    pairs.append(("max_exp_avg_sq", state["max_exp_avg_sq"].numpy(),
                                  model.max_v))
                assert int(state["step"]) == model.step, (i, int(state["step"]), model.step)
            if model.s is not None:
                pairs.append(("ema_params", state["ema_params"].numpy(), model.s))
            else:
                assert "ema_params" not in state, i
            for name, actual, expected in pairs:
                precision = golden.cann_precision(actual, expected)
                assert precision.passed, (i, name, precision)

    def teardown(self):
        torch.set_num_threads(self.threads_at_start)


FusedEmaAdamWMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                                  deadline=None)
test_fused_ema_adamw_follows_the_float64_model = FusedEmaAdamWMachine.TestCase
