"""FusedEmaAdamW under torch.compile: ``torch.compile(opt.step)`` and a compiled training step
(forward, backward, step) run, and give bit for bit the eager results.

dynamo treats an optimizer method named ``_init_group`` specially (it runs it eagerly and
expects a constant back), which crashed both before; and float hyper-parameters are
compile-time constants, so the EMA warm-up's decay (new every step) must not enter the graph
or every step recompiles until dynamo gives up on the whole training step."""

import copy

import pytest
import torch
from test_optim import make_batches, make_model, torch_seed

from ascend_ema_adam.optim import FusedEmaAdamW


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


def all_state(model, opt):
    out = [t for t in model.parameters()]
    for p in model.parameters():
        out += [opt.state[p][k] for k in sorted(opt.state[p])]
    return out


def assert_bit_identical(a_model, a_opt, b_model, b_opt):
    a, b = all_state(a_model, a_opt), all_state(b_model, b_opt)
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.dtype == y.dtype and torch.equal(x, y), i
    assert a_opt.num_updates == b_opt.num_updates


def set_grads(models, seed, n):
    gen = torch.Generator().manual_seed(seed + n)
    for ps in zip(*(m.parameters() for m in models)):
        g = torch.randn(ps[0].shape, generator=gen)
        for p in ps:
            p.grad = g.clone()


@pytest.mark.parametrize("scope", ["param", "group"])
def test_compiled_opt_step_fullgraph_is_bit_identical(rng, scope):
    """Without the warm-up every value the graph depends on is constant: fullgraph, two graphs
    (state creation on the first step, the update afterwards)."""
    seed = torch_seed(rng)
    eager_model = make_model(seed)
    compiled_model = copy.deepcopy(eager_model)
    kwargs = dict(lr=0.02, ema_decay=0.9, use_num_updates=False, step_scope=scope)
    eager = FusedEmaAdamW(eager_model.parameters(), **kwargs)
    compiled = FusedEmaAdamW(compiled_model.parameters(), **kwargs)
    step = torch.compile(compiled.step, fullgraph=True)
    for n in range(4):
        set_grads([eager_model, compiled_model], seed, n)
        eager.step()
        step()
        assert_bit_identical(eager_model, eager, compiled_model, compiled)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] <= 2


@pytest.mark.parametrize("ema_decay", [0.999, 0.5])
def test_compiled_training_step_with_warmup_is_bit_identical(rng, ema_decay):
    """forward + backward + step compiled as one function, EMA warm-up on (the default), more
    steps than dynamo's recompile limit: the results equal eager's bit for bit and the caller
    keeps being compiled (the changing warm-up decay is a tensor in the graph: the counter and
    the decay are computed on the device, so nothing recompiles)."""
    seed = torch_seed(rng)
    eager_model = make_model(seed)
    compiled_model = copy.deepcopy(eager_model)
    eager = FusedEmaAdamW(eager_model.parameters(), lr=0.02, ema_decay=ema_decay)
    compiled = FusedEmaAdamW(compiled_model.parameters(), lr=0.02, ema_decay=ema_decay)

    def train_step(model, opt, x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    compiled_step = torch.compile(train_step, backend="aot_eager")
    steps = torch._dynamo.config.recompile_limit + 4
    for x, y in make_batches(seed, steps):
        expected = train_step(eager_model, eager, x, y)
        actual = compiled_step(compiled_model, compiled, x, y)
        assert torch.equal(actual, expected)
    assert_bit_identical(eager_model, eager, compiled_model, compiled)
    assert compiled.num_updates == steps
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] <= 8


def fullgraph_training_step(model, opt):
    def train_step(x, y):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()
    return train_step


@pytest.fixture
def trace_backward():
    """dynamo traces loss.backward() into the graph only with this switch (torch 2.11 and 2.13
    have it; 2.7.1 has not, and cannot compile a training step with its backward in one graph)."""
    if not hasattr(torch._dynamo.config, "trace_autograd_ops"):
        pytest.skip(f"torch {torch.__version__} cannot trace loss.backward() into a graph "
                    "(no torch._dynamo.config.trace_autograd_ops; docs/OPTIMIZER.md)")
    old = torch._dynamo.config.trace_autograd_ops
    torch._dynamo.config.trace_autograd_ops = True
    yield
    torch._dynamo.config.trace_autograd_ops = old


@pytest.mark.parametrize("scope", ["param", "group"])
def test_fullgraph_training_step_in_the_default_configuration(rng, scope, trace_backward):
    """forward, backward, opt.step() and opt.zero_grad() compiled with fullgraph=True, the
    default configuration (EMA warm-up on, fp32 state), more steps than dynamo's recompile
    limit: eager's bits, and two graphs (state creation, then the update) for the whole run."""
    seed = torch_seed(rng)
    eager_model = make_model(seed)
    compiled_model = copy.deepcopy(eager_model)
    eager = FusedEmaAdamW(eager_model.parameters(), lr=0.02, ema_decay=0.99, step_scope=scope)
    compiled = FusedEmaAdamW(compiled_model.parameters(), lr=0.02, ema_decay=0.99,
                             step_scope=scope)
    eager_step = fullgraph_training_step(eager_model, eager)
    compiled_step = torch.compile(fullgraph_training_step(compiled_model, compiled),
                                  fullgraph=True, backend="aot_eager")
    steps = torch._dynamo.config.recompile_limit + 4
    for x, y in make_batches(seed, steps):
        assert torch.equal(compiled_step(x, y), eager_step(x, y))
        assert all(p.grad is None for p in compiled_model.parameters())
    assert_bit_identical(eager_model, eager, compiled_model, compiled)
    assert compiled.num_updates == steps
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 2


def test_tensor_lr_and_ema_decay_change_without_recompiling(rng, trace_backward):
    """Capturable: lr and ema_decay as one-element float32 tensors; a schedule writes them in
    place between compiled steps, nothing recompiles, and the results are the eager bits of the
    same values given as floats."""
    seed = torch_seed(rng)
    eager_model = make_model(seed)
    compiled_model = copy.deepcopy(eager_model)
    eager = FusedEmaAdamW(eager_model.parameters(), lr=0.02, ema_decay=0.9)
    lr, decay = torch.tensor([0.02]), torch.tensor([0.9])
    compiled = FusedEmaAdamW(compiled_model.parameters(), lr=lr, ema_decay=decay)
    eager_step = fullgraph_training_step(eager_model, eager)
    compiled_step = torch.compile(fullgraph_training_step(compiled_model, compiled),
                                  fullgraph=True, backend="aot_eager")
    for n, (x, y) in enumerate(make_batches(seed, 12)):
        value_lr, value_decay = 0.02 * 0.9**n, 0.9 + 0.005 * n
        eager.param_groups[0]["lr"], eager.ema_decay = value_lr, value_decay
        lr.fill_(value_lr)
        decay.fill_(value_decay)
        assert torch.equal(compiled_step(x, y), eager_step(x, y))
    assert_bit_identical(eager_model, eager, compiled_model, compiled)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 2


def test_eager_tensor_lr_reads_nothing_back(rng, monkeypatch):
    """Eager steps with tensor lr/ema_decay and the default warm-up never read a tensor's value
    on the host (the step counter is a host number, the decay the min of host and device
    values computed on the device)."""
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), lr=torch.tensor([0.01]),
                        ema_decay=torch.tensor([0.99]))
    for x, y in make_batches(seed, 3):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        with monkeypatch.context() as m:
            for name in ("item", "tolist", "__bool__", "__float__", "__int__"):
                m.setattr(torch.Tensor, name, lambda *a, **k: (_ for _ in ()).throw(
                    AssertionError("host read")))
            opt.step()
    assert opt.num_updates == 3


def test_compiled_opt_step_with_an_lr_scheduler(rng):
    """The recipe with a torch LR scheduler. Creating one wraps ``opt.step`` in a function of
    lr_scheduler.py that dynamo refuses to trace (for torch's optimizers too), so
    ``fullgraph=True`` raises at the call, before anything runs. ``torch.compile(opt.step)``
    without it runs that wrapper eagerly and compiles the step inside: with a tensor ``lr``
    (the scheduler writes it in place) two graphs for the whole run, and eager's bits."""
    seed = torch_seed(rng)
    eager_model = make_model(seed)
    compiled_model = copy.deepcopy(eager_model)
    eager = FusedEmaAdamW(eager_model.parameters(), lr=torch.tensor(0.02), ema_decay=0.99)
    compiled = FusedEmaAdamW(compiled_model.parameters(), lr=torch.tensor(0.02),
                             ema_decay=0.99)
    schedulers = [torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.8)
                  for opt in (eager, compiled)]

    fullgraph = torch.compile(compiled.step, fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported, match="should not be traced"):
        fullgraph()
    assert compiled.state == {} and compiled.num_updates == 0  # nothing ran
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()

    step = torch.compile(compiled.step, backend="aot_eager")  # (inductor: the same, slower)
    for n in range(6):
        set_grads([eager_model, compiled_model], seed, n)
        eager.step()
        step()
        for scheduler in schedulers:
            scheduler.step()
        assert_bit_identical(eager_model, eager, compiled_model, compiled)
        assert torch.equal(compiled.param_groups[0]["lr"], eager.param_groups[0]["lr"])
    assert compiled.param_groups[0]["lr"].item() == pytest.approx(0.02 * 0.8**6)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 2


def test_inductor_training_step_optimizer_part_is_bit_identical(rng, trace_backward):
    """What is bit-identical under inductor (the default backend): the optimizer part. A
    training step compiled with ``fullgraph=True`` runs the forward and backward as inductor's
    kernels, which round differently from eager's (here the gradients drift from an eager
    model's by about 1e-7 relative: printed; with ``backend="aot_eager"`` the whole step is
    eager's bits, tested above). So each compiled step (forward, backward, ``opt.step()``, the
    default EMA warm-up computed in the graph) is compared with an eager FusedEmaAdamW given
    that step's gradients: weights, moments, EMA and steps bit for bit."""
    seed = torch_seed(rng)
    model = make_model(seed)
    twin, plain = copy.deepcopy(model), copy.deepcopy(model)
    opts = [FusedEmaAdamW(m.parameters(), lr=0.02, ema_decay=0.99) for m in (model, twin, plain)]
    compiled, eager, plain_opt = opts

    def train_step(x, y):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        compiled.step()
        return loss.detach()

    step = torch.compile(train_step, fullgraph=True)
    drift = 0.0
    for n, (x, y) in enumerate(make_batches(seed, 4)):
        for opt in opts:
            opt.zero_grad()
        step(x, y)
        for p, q in zip(model.parameters(), twin.parameters()):
            q.grad = p.grad.clone()
        eager.step()
        assert_bit_identical(model, compiled, twin, eager)
        torch.nn.functional.mse_loss(plain(x), y).backward()
        plain_opt.step()
        drift = max(drift, max(((p.grad - q.grad).abs().max() / q.grad.abs().max()).item()
                               for p, q in zip(model.parameters(), plain.parameters())))
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 2  # (state creation)
    print(f"\n[inductor] forward/backward vs eager: max relative gradient difference {drift:.1e}")
