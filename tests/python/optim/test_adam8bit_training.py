"""Training side by side (issue 33's numerics), each from the same start on the same batches:

* an MLP on scikit-learn's digits (shipped with the package, no download), 300 steps, by our fp32
  list op, our 8-bit operator (its native kernel, on the parameters of at least 4096 elements; the
  others keep fp32 state, as in FusedEmaAdamW, torchao and bitsandbytes) and torchao's AdamW8bit +
  lerp EMA: the final training loss and the EMA model's test accuracy agree within noise
  (measured over sixty seeds: losses within 0.965-1.023x of fp32's and 0.974-1.049x of torchao's,
  EMA accuracies within 0.5 points of both; torchao's own losses 0.954-1.028x of fp32's: since
  v's positive floor, golden8bit.positive_floor, ours no longer shares torchao's drift of weights
  whose gradients are nearly always 0: it is as near fp32 as torchao is, no nearer torchao). With every parameter on 8 bits, the 10-element bias and the 1,280-element output
  layer too: 0.962-1.023x fp32's loss on those seeds (before the floor, 5 of the 60 ended on a
  late loss spike, 1.13 to 9.1x, the reason the size rule was measured for);
* through the optimizer as users run it, ``FusedEmaAdamW(state_bits=8)`` against
  ``FusedEmaAdamW()`` and torchao's AdamW8bit + lerp, with a linearly decaying learning rate: the
  demo's CNN (``train-demo``'s model and data, 4 epochs, the means of three starts) and a tiny
  transformer (2 encoder layers, d_model 64) learning to sort 10 digits, 200 steps. The limits lie
  above the largest gaps measured over many seeds (given at each test): against fp32 how much
  worse, against torchao either way.
"""

import warnings

import numpy as np
import pytest
import torch

from ascend_ema_adam import _kernels, golden8bit as g8, kernels
from ascend_ema_adam.apps import train_demo
from ascend_ema_adam.golden import Hyper
from ascend_ema_adam.optim import FusedEmaAdamW

STEPS = 300
LR, EMA_DECAY, WEIGHT_DECAY = 3e-3, 0.99, 0.01
HYPER = Hyper(lr=LR, ema_decay=EMA_DECAY, weight_decay=WEIGHT_DECAY)


def digits(seed):
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    x, y = torch.tensor(x / 16.0, dtype=torch.float32), torch.tensor(y)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    return x[order[:1400]], y[order[:1400]], x[order[1400:]], y[order[1400:]]


def mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


class Ours:
    """One launch per step over every parameter: the fp32 list op or the 8-bit operator."""

    def __init__(self, params, bits):
        self.params, self.bits, self.step = list(params), bits, 0
        self.ema = [p.detach().clone() for p in self.params]
        n = [p.numel() for p in self.params]
        if bits == 32:
            self.m = [np.zeros(k, np.float32) for k in n]
            self.v = [np.zeros(k, np.float32) for k in n]
        else:
            self.qmap_m, self.qmap_v = g8.dynamic_map(True), g8.dynamic_map(False)
            zero = int(np.searchsorted(self.qmap_m, 0.0))  # the signed map's code of 0
            self.m = [np.full(k, zero, np.uint8) for k in n]
            self.v = [np.zeros(k, np.uint8) for k in n]
            self.m_absmax = [np.zeros(g8.blocks(k), np.float32) for k in n]
            self.v_absmax = [np.zeros(g8.blocks(k), np.float32) for k in n]
            self.attrs = _kernels.Attrs()
            for name in ("lr", "ema_decay", "weight_decay"):
                setattr(self.attrs, name, getattr(HYPER, name))

    def __call__(self):
        self.step += 1
        grads = [p.grad.numpy().reshape(-1) for p in self.params]  # flat views, in place
        weights = [p.data.numpy().reshape(-1) for p in self.params]
        ema = [s.numpy().reshape(-1) for s in self.ema]
        if self.bits == 32:
            kernels.apply_fused_ema_adam_list_native(grads, weights, self.m, self.v, ema,
                                                  np.array([self.step]), HYPER)
        else:
            _kernels.launch_native_adam8bit_list(
                grads, weights, self.m, self.v, self.m_absmax, self.v_absmax, ema, None,
                [w.size for w in weights], self.qmap_m, self.qmap_v, np.array([self.step]),
                None, None, "float32", "float32", "", self.attrs, False)


class Ours8bit:
    """The 8-bit operator on the parameters of at least MIN_8BIT_SIZE elements, the fp32 list op on
    the others (FusedEmaAdamW's min_8bit_size default, torchao's and bitsandbytes' rule)."""

    MIN_8BIT_SIZE = 4096

    def __init__(self, params):
        params = list(params)
        self.large = Ours([p for p in params if p.numel() >= self.MIN_8BIT_SIZE], 8)
        self.small = Ours([p for p in params if p.numel() < self.MIN_8BIT_SIZE], 32)
        large, small = iter(self.large.ema), iter(self.small.ema)
        self.ema = [next(large) if p.numel() >= self.MIN_8BIT_SIZE else next(small)
                    for p in params]
        self.eight_bit_elements = sum(p.numel() for p in self.large.params)

    def __call__(self):
        self.large()
        self.small()


class Torchao:
    """torchao's AdamW8bit (block 256) + torch._foreach_lerp_ EMA."""

    def __init__(self, params):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its CUDA extensions cannot load here, and say so
            from torchao.optim import AdamW8bit
        self.params = list(params)
        self.optimizer = AdamW8bit(self.params, lr=LR, weight_decay=WEIGHT_DECAY, block_size=256)
        self.ema = [p.detach().clone() for p in self.params]

    def __call__(self):
        self.optimizer.step()
        torch._foreach_lerp_(self.ema, [p.data for p in self.params], 1.0 - EMA_DECAY)


def train(make, seed, data):
    x, y, x_test, y_test = data
    net = mlp(seed)
    step = make(net.parameters())
    batches = torch.Generator().manual_seed(seed + 1)
    losses = []
    for _ in range(STEPS):
        index = torch.randint(0, len(x), (64,), generator=batches)
        net.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x[index]), y[index])
        loss.backward()
        step()
        losses.append(loss.item())
    ema = mlp(seed)
    with torch.no_grad():
        for target, value in zip(ema.parameters(), step.ema):
            target.copy_(value)
        accuracy = (ema(x_test).argmax(1) == y_test).float().mean().item()
    return float(np.mean(losses[-50:])), accuracy


@pytest.mark.slow
def test_8bit_trains_like_fp32_and_torchao(rng, monkeypatch):
    # torchao compiles its per-parameter step with torch.compile, which takes minutes to build on
    # two cores: it runs eagerly here (the same arithmetic).
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    seed = int(rng.integers(0, 2**31))
    data = digits(seed)
    fp32 = train(lambda p: Ours(p, 32), seed, data)
    eight_bit = []

    def make_eight_bit(params):
        eight_bit.append(Ours8bit(params))
        return eight_bit[-1]

    ours = train(make_eight_bit, seed, data)
    theirs = train(Torchao, seed, data)
    print(f"final loss / EMA test accuracy: fp32 {fp32}, 8-bit {ours}, torchao {theirs}")
    assert eight_bit[0].eight_bit_elements == 64 * 128  # the first layer's weight
    # about twice the largest gaps of sixty seeds (the module docstring)
    for reference, loss, points in ((fp32, 0.1, 0.01), (theirs, 0.1, 0.01)):
        assert abs(ours[0] / reference[0] - 1) <= loss, (ours, reference)
        assert abs(ours[1] - reference[1]) <= points, (ours, reference)
    assert ours[1] > 0.9  # it learned: ten classes, 10 % by chance


# ---------------------------------------------------------------------------------------------
# Through the optimizer: the demo's CNN and a tiny transformer


class TinySorter(torch.nn.Module):
    """A 2-layer transformer encoder reading 10 digits and predicting, at each position, the digit
    the sorted sequence has there."""

    LENGTH, VOCAB = 10, 10

    def __init__(self, width=64):
        super().__init__()
        self.embed = torch.nn.Embedding(self.VOCAB, width)
        self.position = torch.nn.Parameter(0.1 * torch.randn(self.LENGTH, width))
        layer = torch.nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(width, self.VOCAB)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x) + self.position))


def sorting_batch(generator, n):
    x = torch.randint(0, TinySorter.VOCAB, (n, TinySorter.LENGTH), generator=generator)
    return x, x.sort(1).values


class TorchaoLerp:
    """torchao's AdamW8bit (block 256) + a constant-decay torch._foreach_lerp_ EMA, behind the
    optimizer interface the training loop uses."""

    def __init__(self, params, lr, ema_decay):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torchao.optim import AdamW8bit
        self.params = list(params)
        self.optimizer = AdamW8bit(self.params, lr=lr, weight_decay=WEIGHT_DECAY, block_size=256)
        self.ema = [p.detach().clone() for p in self.params]
        self.ema_decay = ema_decay

    def step(self):
        self.optimizer.step()
        torch._foreach_lerp_(self.ema, [p.data for p in self.params], 1.0 - self.ema_decay)


def make_optimizer(kind, params, lr, ema_decay):
    """FusedEmaAdamW in fp32 (32) or 8-bit (8) state, with a constant EMA decay as the lerp's, or
    torchao's."""
    if kind == "torchao":
        return TorchaoLerp(params, lr, ema_decay)
    return FusedEmaAdamW(params, lr=lr, weight_decay=WEIGHT_DECAY, ema_decay=ema_decay,
                         use_num_updates=False, state_bits=kind)


def ema_weights(optimizer, params):
    if isinstance(optimizer, TorchaoLerp):
        return optimizer.ema
    return [optimizer.state[p]["ema_params"] for p in params]


def eight_bit_elements(optimizer, params):
    """Elements whose moments the optimizer keeps in 8 bits."""
    if not isinstance(optimizer, FusedEmaAdamW):
        return None
    return sum(p.numel() for p in params if "exp_avg_codes" in optimizer.state[p])


def train_model(kind, seed, make_model, batches, steps, lr, ema_decay, evaluate):
    """Trains make_model() from the seed's start on `batches` with a learning rate decaying
    linearly to 0; returns (mean training loss of the last 50 steps, the EMA weights' held-out
    accuracy, their held-out loss, elements kept in 8 bits)."""
    torch.manual_seed(seed)
    model = make_model()
    params = list(model.parameters())
    optimizer = make_optimizer(kind, params, lr, ema_decay)
    inner = optimizer.optimizer if isinstance(optimizer, TorchaoLerp) else optimizer
    schedule = torch.optim.lr_scheduler.LambdaLR(inner, lambda t: 1.0 - t / steps)
    losses = []
    for x, y in batches(steps):
        for p in params:
            p.grad = None
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 y.reshape(-1))
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    torch.manual_seed(seed)
    ema = make_model()
    with torch.no_grad():
        for target, value in zip(ema.parameters(), ema_weights(optimizer, params)):
            target.copy_(value)
        accuracy, held_out_loss = evaluate(ema)
    return float(np.mean(losses[-50:])), accuracy, held_out_loss, eight_bit_elements(optimizer,
                                                                                     params)


def held_out(x, y):
    def evaluate(model):
        logits = model(x)
        classes = logits.shape[-1]
        accuracy = (logits.argmax(-1) == y).float().mean().item()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, classes), y.reshape(-1))
        return accuracy, loss.item()
    return evaluate


def compare_runs(runs, limits):
    """Our 8-bit run against fp32 and against torchao (limits[32], limits["torchao"]): training
    loss and held-out loss within the relative limits, held-out accuracy within the absolute one
    (a fraction: 0.01 is one point). Against fp32 the limits bound how much worse ours ends: from
    one start, which of two runs ends ahead is chance, and an 8-bit run (ours and torchao's alike)
    sometimes ends well ahead of fp32. Against torchao, the same quantisation, either way.
    runs[kind] is one run's result or a list of runs from several starts, compared by their
    means."""
    runs = {kind: tuple(np.mean([r[i] for r in run]) for i in range(3)) if isinstance(run, list)
            else run for kind, run in runs.items()}
    print("final training loss, EMA held-out accuracy and loss:",
          {kind: tuple(round(float(x), 4) for x in run[:3]) for kind, run in runs.items()})
    ours = runs[8]
    for kind, limit in limits.items():
        reference = runs[kind]
        gaps = (ours[0] / reference[0] - 1, reference[1] - ours[1], ours[2] / reference[2] - 1)
        if kind != 32:
            gaps = tuple(abs(gap) for gap in gaps)
        assert gaps[0] <= limit["train_loss"], (kind, ours, reference)
        assert gaps[1] <= limit["accuracy"], (kind, ours, reference)
        assert gaps[2] <= limit["held_out_loss"], (kind, ours, reference)


@pytest.mark.slow
def test_8bit_trains_the_demo_cnn_like_fp32_and_torchao(rng, monkeypatch):
    """The demo's CNN on its digits split, 4 epochs of batch 32 at lr 3e-3, EMA decay 0.99, from
    three starts (each its own split, initialisation and batch order), compared by the means.
    From one start the runs' trajectories part by chance: over 24 starts the largest gaps were
    training loss (the last 50 batches) 3.1 %, EMA accuracy 0.22 points, held-out loss 2.3 %
    against fp32, 6.8 %, 0.67 points, 8.4 % against torchao (which keeps the drift v's positive
    floor removed; before the floor, over 42 starts: 5.4 %, 1.1 points, 3.4 %). Means over three
    starts, every one of the 2,024 triples of those 24: ours worse than fp32 by at most 1.8 %,
    0.22 points, 1.4 %; against torchao at most 5.9 %, 0.52 points, 5.3 %. (At the
    demo's own lr of 1e-2 both 8-bit optimizers sometimes end well behind fp32, e.g. held-out
    loss 0.244 (ours) and 0.203 (torchao) against 0.119: too noisy a rate to compare at.)"""
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)  # torchao's step, eagerly
    runs = {32: [], 8: [], "torchao": []}
    for seed in rng.integers(0, 2**31, size=3):
        seed = int(seed)
        x, y, x_test, y_test = train_demo._data(seed)
        epochs, batch = 4, 32
        per_epoch = -(-len(x) // batch)

        def batches(steps):
            order = torch.Generator().manual_seed(seed + 1)
            for _ in range(epochs):
                shuffled = torch.randperm(len(x), generator=order)
                for i in range(per_epoch):
                    index = shuffled[i * batch:(i + 1) * batch]
                    yield x[index], y[index]

        for kind, kind_runs in runs.items():
            kind_runs.append(train_model(kind, seed, train_demo._model, batches,
                                         epochs * per_epoch, 3e-3, 0.99, held_out(x_test, y_test)))
        # the two large layers (4,608 and 32,768 weights) keep 8-bit moments, the others fp32
        assert runs[8][-1][3] == 16 * 32 * 9 + 32 * 4 * 4 * 64 and runs[32][-1][3] == 0
        assert runs[8][-1][1] > 0.9  # 10 % by chance; over 42 starts 93-98 %, as fp32
    compare_runs(runs, {32: {"train_loss": 0.25, "accuracy": 0.02, "held_out_loss": 0.13},
                        "torchao": {"train_loss": 0.12, "accuracy": 0.012, "held_out_loss": 0.11}})


@pytest.mark.slow
def test_8bit_trains_a_tiny_transformer_like_fp32_and_torchao(rng, monkeypatch):
    """TinySorter, 200 steps of 64 fresh sequences at lr 3e-3, EMA decay 0.99. Over 24 seeds,
    ours worse than fp32 by at most: training loss (the last 50 batches) 8.5 %, EMA per-digit
    accuracy 0.30 points, held-out loss 1.6 % (the build before v's positive floor on the same
    seeds: 6.9 %, 0.29 points, 0.98 %; the mean gaps 0.4 % and -0.1 %, 0.12 % and 0.03 %: the
    same within noise); against torchao, either way, at most 13.5 %, 0.21 points, 2.0 % (before
    the floor 3.4 %, 0.22 points, 0.84 %: torchao keeps the drift the floor removed)."""
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    seed = int(rng.integers(0, 2**31))
    x_test, y_test = sorting_batch(torch.Generator().manual_seed(seed + 2), 1000)

    def batches(steps):
        fresh = torch.Generator().manual_seed(seed + 1)
        for _ in range(steps):
            yield sorting_batch(fresh, 64)

    runs = {kind: train_model(kind, seed, TinySorter, batches, 200, 3e-3, 0.99,
                              held_out(x_test, y_test))
            for kind in (32, 8, "torchao")}
    # every attention and feed-forward weight (12,288, 4,096, 8,192 and 8,192 per layer) is 8-bit
    assert runs[8][3] == 2 * (3 * 64 * 64 + 64 * 64 + 2 * 128 * 64)
    compare_runs(runs, {32: {"train_loss": 0.2, "accuracy": 0.007, "held_out_loss": 0.035},
                        "torchao": {"train_loss": 0.27, "accuracy": 0.005, "held_out_loss": 0.04}})
    assert runs[8][1] > 0.6  # 10 % by chance
