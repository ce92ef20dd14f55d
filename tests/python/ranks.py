"""What the multi-process tests share (test_distributed, test_integration_*): spawning the ranks
of one job, recording a rank's failure where the parent can show it, and collecting each rank's
results, and a parent's reference run on one thread as the ranks (``one_thread``). A worker is ``worker(rank, port, seed, out_dir)`` and saves its results with
``save_results``; the parent's ``run_ranks`` (or, in a module fixture, ``spawn_job``) returns
them, rank by rank. Also the small seeded model their ranks train."""

import contextlib
import os
import socket
import time
import traceback

import torch
import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def one_thread():
    """torch on one thread meanwhile (restored after): the ranks run on one, and a parent's
    reference computed the same way has their summation order."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def recording_errors(rank: int, out_dir: str):
    """In a worker: a failure leaves its traceback in ``rank<r>.error`` for the parent."""
    try:
        yield
    except BaseException:
        with open(os.path.join(out_dir, f"rank{rank}.error"), "w") as f:
            f.write(traceback.format_exc())
        raise


def save_results(rank: int, out_dir: str, results) -> None:
    torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))


def run_ranks(worker, world: int, seed: int, out_dir: str, timeout_s: float) -> list:
    """Spawns ``world`` ranks of ``worker(rank, port, seed, out_dir)`` and waits for them; a rank
    that fails, or a job still running after ``timeout_s``, kills the others and raises with every
    rank's traceback and the seed. Returns each rank's saved results."""
    ctx = mp.spawn(worker, args=(free_port(), seed, out_dir), nprocs=world, join=False)
    deadline = time.monotonic() + timeout_s
    try:
        while not ctx.join(timeout=max(0.1, deadline - time.monotonic())):
            if time.monotonic() > deadline:
                raise TimeoutError(f"ranks still running after {timeout_s} s (seed {seed})")
    except BaseException as exc:
        for proc in ctx.processes:
            if proc.is_alive():
                proc.kill()
        errors = "".join(open(os.path.join(out_dir, f)).read()
                         for f in sorted(os.listdir(out_dir)) if f.endswith(".error"))
        raise AssertionError(f"seed {seed}: {exc}\n{errors}") from exc
    return [torch.load(os.path.join(out_dir, f"rank{r}.pt"), weights_only=False)
            for r in range(world)]


def spawn_job(name: str, worker, world: int, timeout_s: float, tmp_path_factory, new_seed):
    """A module fixture's job: a new printed seed (``new_seed(name)``), a fresh directory, the
    ranks run (``run_ranks``) and their time printed. Returns (seed, each rank's results)."""
    seed = new_seed(name)
    out_dir = str(tmp_path_factory.mktemp(name))
    started = time.monotonic()
    results = run_ranks(worker, world, seed, out_dir, timeout_s)
    print(f"{name}: {world} ranks in {time.monotonic() - started:.1f} s")
    return seed, results


def tanh_mlp(seed: int, widths: tuple, scale: float) -> torch.nn.Sequential:
    """Linear layers of ``widths`` (in, hidden..., out) with Tanh between, weights and biases
    drawn from ``seed`` times ``scale``."""
    gen = torch.Generator().manual_seed(seed)
    layers = []
    for k, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        layers += [torch.nn.Tanh()] if k else []
        layers.append(torch.nn.Linear(fan_in, fan_out))
    model = torch.nn.Sequential(*layers)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * scale)
    return model
