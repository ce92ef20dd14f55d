"""Train a small CNN on scikit-learn's bundled digits with FusedEmaAdamW (through the kernel).

``python -m ascend_ema_adam train-demo [--epochs N] [--out PATH.png] [--seed S]`` trains the same
model from the same start twice: in float32, and in bfloat16 with the optimizer's defaults (fp32
moments and EMA for 16-bit parameters). Per epoch it prints the training loss and the held-out
accuracy of the raw and the EMA weights (evaluated with ``optimizer.swap_ema()``), draws both runs
into one PNG, and spot-checks one real optimizer step of each run against ``golden.emulate_entry``
bit for bit. The digits (1,797 8x8 images) ship with
scikit-learn: nothing is downloaded. It needs tqdm and scikit-learn, and matplotlib for the
picture (the ``demo`` extra: ``pip install tqdm scikit-learn matplotlib``, or
``pip install '.[demo]'`` in a checkout); without matplotlib it trains and checks, and draws
nothing.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

from .._files import atomic_file

DEFAULT_OUT = os.path.join("ascend-ema-adam-demo", "train_demo.png")
# (module, the package that installs it): the demo extra of pyproject.toml; the training needs
# the first two, the picture the last
DEMO_MODULES = (("sklearn", "scikit-learn"), ("tqdm", "tqdm"), ("matplotlib", "matplotlib"))
NEEDED = 2


def _installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _require_demo_extra() -> None:
    """Fail before training, naming what is missing and the command that installs it."""
    missing = [(module, package) for module, package in DEMO_MODULES[:NEEDED]
               if not _installed(module)]
    if missing:
        raise SystemExit(
            f"train-demo needs {', '.join(f'{p} (import {m})' for m, p in missing)}. Install "
            f"it with: pip install {' '.join(p for _, p in missing)} (the demo extra: "
            f"pip install '.[demo]' in a checkout)")


def _data(seed: int):
    import numpy as np
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, stratify=y,
                                                        random_state=seed)
    mean, std = x_train.mean(), x_train.std()
    return tuple(torch.from_numpy(a) for a in ((x_train - mean) / std, y_train,
                                               (x_test - mean) / std, y_test))


def _model():
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def _evaluate(model, x, y):
    import torch

    with torch.no_grad():
        logits = model(x).float()
        loss = torch.nn.functional.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(1) == y).float().mean().item()
    return loss, accuracy


def _spot_check(optimizer):
    """Run optimizer.step() and hold every parameter's (var, m, v, s) to golden.emulate_entry
    (same step number, warmed-up decay, group hyper-parameters and state dtypes). Returns (ok,
    tensors, elements, step)."""
    import numpy as np

    from .. import golden
    from .._dtypes import to_numpy as as_numpy
    from ..golden import Hyper

    n = optimizer.num_updates + 1
    decay = min(optimizer.ema_decay, (1 + n) / (10 + n)) if n > 0 else optimizer.ema_decay
    expected = []
    for group in optimizer.param_groups:
        b1, b2 = group["betas"]
        h = Hyper(lr=float(group["lr"]), ema_decay=decay, beta1=b1, beta2=b2, eps=group["eps"],
                  mode=optimizer.adam_w_mode, bias_correction=group["bias_correction"],
                  weight_decay=group["weight_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            st = optimizer.state[p]
            # the step this update uses: the parameter's own (torch's), or its group's
            counter = group if optimizer.step_scope == "group" else st
            step = int(counter["step"].item()) + 1 if "step" in counter else 1
            inputs = [as_numpy(t) for t in (p.grad, p, st["exp_avg"], st["exp_avg_sq"],
                                            st["ema_params"])]
            expected.append((p, golden.emulate_entry(*inputs, np.array([step]), h)))
    optimizer.step()
    ok = True
    for p, want in expected:
        st = optimizer.state[p]
        for actual, value in ((p, want.var), (st["exp_avg"], want.m), (st["exp_avg_sq"], want.v),
                              (st["ema_params"], want.s)):
            ok &= golden.bit_equal(as_numpy(actual), value)
    return ok, len(expected), sum(p.numel() for p, _ in expected), step


# (label, line style) of each run in the plot
RUNS = (("float32", "-"), ("bfloat16", "--"))


def _plot(histories: dict, path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(12, 4.6))
    raw, ema = "C0", "C1"
    for label, style in RUNS:
        history = histories[label]
        epochs = [h["epoch"] for h in history]
        ax_loss.plot(epochs, [h["train_loss"] for h in history], "o" + style, color="0.6",
                     label=f"{label}: train (raw)", markersize=3)
        ax_loss.plot(epochs, [h["test_loss_raw"] for h in history], "s" + style, color=raw,
                     label=f"{label}: held-out, raw", markersize=4)
        ax_loss.plot(epochs, [h["test_loss_ema"] for h in history], "^" + style, color=ema,
                     label=f"{label}: held-out, EMA", markersize=4)
        ax_acc.plot(epochs, [100 * h["acc_raw"] for h in history], "s" + style, color=raw,
                    label=f"{label}: raw weights", markersize=4)
        ax_acc.plot(epochs, [100 * h["acc_ema"] for h in history], "^" + style, color=ema,
                    label=f"{label}: EMA weights", markersize=4)
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy")
    ax_loss.set_title("loss")
    ax_loss.grid(alpha=0.3)
    ax_loss.legend(fontsize=7)
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("held-out accuracy (%)")
    ax_acc.set_title("held-out accuracy")
    ax_acc.grid(alpha=0.3)
    ax_acc.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_file(path) as file:
        fig.savefig(file, format="png", dpi=110)
    plt.close(fig)


def main(epochs: int = 15, out: str | None = None, seed: int = 0, batch_size: int = 32,
         lr: float = 2e-2, ema_decay: float = 0.995) -> int:
    """Train both runs, print, plot, spot-check. Returns 0 when both spot-checks are bit-exact.

    The constant learning rate is deliberately on the high side for Adam: the raw weights keep
    jumping around the minimum, which is what an EMA of the weights smooths out."""
    import torch

    if epochs < 1:
        raise ValueError(f"--epochs must be at least 1, got {epochs}")
    _require_demo_extra()
    out = out or DEFAULT_OUT
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)  # the plot, checkpoints
    start = time.perf_counter()
    # A model this small runs fastest on one thread: more only spin against each other (and
    # against anything else on the machine) inside every tiny conv/matmul.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        data = _data(seed)
        initial = _model().state_dict()  # both runs start from these weights
        n_params = sum(t.numel() for t in initial.values())
        print(f"digits: {len(data[0])} train / {len(data[2])} held-out 8x8 images; CNN with "
              f"{n_params:,} parameters in {len(initial)} tensors")
        print(f"FusedEmaAdamW(lr={lr}, weight_decay=0.01, ema_decay={ema_decay}, EMA warm-up "
              f"on): one fused multi-tensor kernel launch per step, on the CPU device; held-out "
              f"accuracy of the EMA weights via optimizer.swap_ema()")
        histories, spots, states, reloaded = {}, {}, {}, {}
        for label, _ in RUNS:
            checkpoint_path = os.path.join(os.path.dirname(os.path.abspath(out)),
                                           f"train_demo_{label}.pt")
            histories[label], spots[label], states[label], reloaded[label] = _train(
                getattr(torch, label), initial, data, epochs, seed, batch_size, lr, ema_decay,
                checkpoint_path)
    finally:
        torch.set_num_threads(threads)

    if _installed("matplotlib"):
        _plot(histories, out, f"FusedEmaAdamW on sklearn digits ({epochs} epochs): float32 "
                              f"weights vs bfloat16 weights with {states['bfloat16']} moments "
                              f"and EMA")
        print(f"plot: {os.path.abspath(out)}")
    else:
        print("plot: none (matplotlib is not installed: pip install matplotlib)")
    ok = all(reloaded.values())
    for label, _ in RUNS:
        spot = spots[label]
        if spot is None:
            print(f"{label} golden spot-check: not reached, FAIL")
            ok = False
            continue
        passed, tensors, elements, step = spot
        ok &= passed
        print(f"{label} golden spot-check, step {step}: {tensors} tensors, {elements:,} "
              f"elements, var/m/v/s vs golden.emulate_entry: "
              f"{'bit-exact, PASS' if passed else 'MISMATCH, FAIL'}")
    print(f"train-demo finished in {time.perf_counter() - start:.1f} s")
    return 0 if ok else 1


def _train(dtype, initial, data, epochs, seed, batch_size, lr, ema_decay, checkpoint_path):
    """One run in `dtype` from the `initial` weights, saved to `checkpoint_path` after every
    epoch. Returns (history, spot-check result, the dtype name of the optimizer state, whether
    the last checkpoint reloaded into a fresh model gives the same EMA accuracy)."""
    import torch
    from tqdm import tqdm

    from .. import checkpoint
    from ..optim import FusedEmaAdamW

    label = str(dtype).removeprefix("torch.")
    x_train, y_train, x_test, y_test = data
    x_train, x_test = x_train.to(dtype), x_test.to(dtype)
    model = _model()
    model.load_state_dict(initial)
    model.to(dtype)
    optimizer = FusedEmaAdamW(model.parameters(), lr=lr, weight_decay=1e-2, ema_decay=ema_decay)
    steps_per_epoch = -(-len(x_train) // batch_size)
    # a step in the middle of the run; at least the second (the first makes the state it checks)
    check_at = max(2, steps_per_epoch * (epochs // 2) + 1)

    history, spot = [], None
    gen = torch.Generator().manual_seed(seed)
    # A live bar on a terminal; in a log it would be thousands of carriage-return updates.
    bar = tqdm(total=epochs * steps_per_epoch, unit="step", dynamic_ncols=True, leave=False,
               mininterval=0.25, disable=not sys.stderr.isatty())
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(len(x_train), generator=gen)
        total = 0.0
        for i in range(steps_per_epoch):
            idx = order[i * batch_size:(i + 1) * batch_size]
            optimizer.zero_grad()
            logits = model(x_train[idx]).float()
            loss = torch.nn.functional.cross_entropy(logits, y_train[idx])
            loss.backward()
            if optimizer.num_updates + 1 == check_at:
                spot = _spot_check(optimizer)
            else:
                optimizer.step()
            total += loss.item() * len(idx)
            bar.update(1)
            bar.set_postfix(run=label, epoch=epoch, loss=f"{loss.item():.3f}")
        if epoch == 1:
            state = optimizer.state[next(model.parameters())]
            state_dtype = str(state["ema_params"].dtype).removeprefix("torch.")
            bar.write(f"{label} run: parameters in {label}, exp_avg/exp_avg_sq/ema_params in "
                      f"{state_dtype}")
        model.eval()
        test_loss_raw, acc_raw = _evaluate(model, x_test, y_test)
        with optimizer.swap_ema():
            test_loss_ema, acc_ema = _evaluate(model, x_test, y_test)
        history.append(dict(epoch=epoch, train_loss=total / len(x_train),
                            test_loss_raw=test_loss_raw, test_loss_ema=test_loss_ema,
                            acc_raw=acc_raw, acc_ema=acc_ema))
        decay = min(ema_decay, (1 + optimizer.num_updates) / (10 + optimizer.num_updates))
        bar.write(f"{label:>8} epoch {epoch:2d}  train loss {total / len(x_train):.4f}  "
                  f"held-out acc: raw {100 * acc_raw:5.1f}%  EMA {100 * acc_ema:5.1f}%  "
                  f"(EMA decay now {decay:.4f})")
        checkpoint.save_checkpoint(checkpoint_path, model, optimizer, epoch=epoch,
                                   history=history)
    bar.close()
    best_raw = max(h["acc_raw"] for h in history)
    best_ema = max(h["acc_ema"] for h in history)
    last = history[-1]
    print(f"{label} final held-out accuracy ({optimizer.num_updates} steps): raw "
          f"{100 * last['acc_raw']:.1f}%, EMA {100 * last['acc_ema']:.1f}% (best: raw "
          f"{100 * best_raw:.1f}%, EMA {100 * best_ema:.1f}%)")
    # What resuming or evaluating from the file gives: a fresh model and optimizer, loaded.
    fresh_model = _model().to(dtype)
    fresh = FusedEmaAdamW(fresh_model.parameters(), lr=lr, weight_decay=1e-2, ema_decay=ema_decay)
    saved = checkpoint.load_checkpoint(checkpoint_path, fresh_model, fresh)
    with fresh.swap_ema():
        _, acc_reloaded = _evaluate(fresh_model, x_test, y_test)
    same = saved["epoch"] == epochs and acc_reloaded == last["acc_ema"]
    print(f"{label} checkpoint (saved after every epoch): {checkpoint_path}; reloaded into a "
          f"fresh model: EMA {100 * acc_reloaded:.1f}% "
          f"{'(the same), PASS' if same else 'DIFFERS, FAIL'}")
    return history, spot, state_dtype, same
