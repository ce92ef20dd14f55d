"""8-bit state on weights whose gradients are nearly always 0: a digits MLP (64-256-128-10; the
images' border pixels are nearly always 0, so are the gradients of their first-layer weights),
8 epochs at lr 3e-3, the same start and batches for each optimizer.

Before v's positive floor (golden8bit.positive_floor) ``FusedEmaAdamW(state_bits=8)`` moved 265
weights by more than 1, the largest by 59, as torchao's AdamW8bit does (265, 57): a v rounded to
code 0 while its m kept a code made a step of lr * m / eps. torch's AdamW (fp32) and
bitsandbytes' AdamW8bit moved none by more than 0.51 over six seeds; ours now none by more than
0.48, the largest within 0.92-1.13x of fp32's on the same seeds.
"""

import warnings

import torch

from ascend_ema_adam.optim import FusedEmaAdamW

LR, EPOCHS, BATCH = 3e-3, 8, 32


def digits():
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    return torch.tensor(x / 16.0, dtype=torch.float32), torch.tensor(y)


def mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, 10))


def train(make_optimizer, seed, data):
    """The weights' moves from the start (flat) and the training accuracy at the end."""
    x, y = data
    net = mlp(seed)
    start = [p.detach().clone() for p in net.parameters()]
    opt = make_optimizer(net.parameters())
    order = torch.Generator().manual_seed(seed)
    for _ in range(EPOCHS):
        perm = torch.randperm(len(x), generator=order)
        for i in range(0, len(x), BATCH):
            batch = perm[i:i + BATCH]
            loss = torch.nn.functional.cross_entropy(net(x[batch]), y[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        moved = torch.cat([(p - q).abs().flatten() for p, q in zip(net.parameters(), start)])
        accuracy = (net(x).argmax(1) == y).float().mean().item()
    return moved, accuracy


def test_rarely_active_weights_do_not_drift_with_8bit_state(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bitsandbytes' notes on a CPU without CUDA
        import bitsandbytes as bnb
    torch.set_num_threads(1)
    data = digits()
    fp32, fp32_acc = train(lambda ps: torch.optim.AdamW(ps, lr=LR), seed, data)
    ours, ours_acc = train(lambda ps: FusedEmaAdamW(ps, lr=LR, weight_decay=0.01, state_bits=8),
                           seed, data)
    theirs, theirs_acc = train(lambda ps: bnb.optim.AdamW8bit(ps, lr=LR), seed, data)
    summary = {name: (int((m > 1).sum()), round(m.max().item(), 3), round(acc, 4))
               for name, m, acc in (("fp32", fp32, fp32_acc), ("ours 8-bit", ours, ours_acc),
                                    ("bitsandbytes 8-bit", theirs, theirs_acc))}
    print(f"(weights moved by > 1, largest move, accuracy): {summary}")
    assert (ours > 1).sum() <= (theirs > 1).sum() and (ours > 1).sum() == 0, summary
    assert ours.max() <= 1.5 * fp32.max(), summary  # 0.92-1.13x over six seeds
    assert ours_acc >= fp32_acc - 0.02, summary
