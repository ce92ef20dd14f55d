"""ascend_ema_adam.checkpoint: saves a kill cannot corrupt, and loads that refuse a damaged file
before touching the model or the optimizer.

The kill test trains in a child process that resumes from the checkpoint, steps and saves in a
loop; the parent kills it with SIGKILL at a random moment, many times, and after every kill the
file must load, hold the last save the child finished (or the one it was finishing), and the
training resumed across all the kills must equal one run without them, bit for bit."""

import multiprocessing
import os
import random
import signal
import time
import zipfile

import pytest
import torch

from ascend_ema_adam import FusedEmaAdamW
from ascend_ema_adam import checkpoint
from ascend_ema_adam._files import atomic_file

OPTIMIZER_KINDS = {
    "fp32": dict(),
    "amsgrad_group_steps": dict(amsgrad=True, step_scope="group"),
    "8bit": dict(state_bits=8, min_8bit_size=64),
}


def _model(seed: int, width: int = 48) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.LayerNorm(width),
                               torch.nn.Linear(width, 3))


def _train_step(model, optimizer, step: int) -> None:
    """One step on data drawn from the step's own seed: a resumed run sees the same data."""
    generator = torch.Generator().manual_seed(1000 + step)
    width = model[0].in_features
    x = torch.randn(16, width, generator=generator)
    y = torch.randint(0, 3, (16,), generator=generator)
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


def _trained(kind: str, steps: int, seed: int, width: int = 48):
    model = _model(seed, width)
    optimizer = FusedEmaAdamW(model.parameters(), lr=3e-3, ema_decay=0.9,
                              **OPTIMIZER_KINDS[kind])
    for step in range(steps):
        _train_step(model, optimizer, step)
    return model, optimizer


def _leaves(value, where=""):
    """(path, value) of every leaf of a nested state dict, in order."""
    if isinstance(value, dict):
        return [x for key in sorted(value, key=str) for x in _leaves(value[key], f"{where}/{key}")]
    if isinstance(value, (list, tuple)):
        return [x for i, item in enumerate(value) for x in _leaves(item, f"{where}[{i}]")]
    return [(where, value)]


def _assert_same(a, b) -> None:
    left, right = _leaves(a), _leaves(b)
    assert [key for key, _ in left] == [key for key, _ in right]
    for key, x in left:
        y = dict(right)[key]
        if isinstance(x, torch.Tensor):
            assert isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape, key
            assert torch.equal(x, y), key
        else:
            assert x == y or (x != x and y != y), key


def _snapshot(model, optimizer):
    return ({k: v.clone() for k, v in model.state_dict().items()},
            _clone_tree(optimizer.state_dict()))


def _clone_tree(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _clone_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone_tree(v) for v in value]
    return value


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_KINDS))
def test_a_resumed_run_equals_the_uninterrupted_one(tmp_path, kind):
    path = tmp_path / "run.pt"
    model, optimizer = _trained(kind, 5, seed=3)
    checkpoint.save_checkpoint(path, model, optimizer, step=5, note="five")
    assert torch.load(path, weights_only=True)["extra"] == {"step": 5, "note": "five"}
    assert zipfile.ZipFile(path).comment.startswith(b"ascend_ema_adam:sha256:")

    fresh_model = _model(seed=99)
    fresh = FusedEmaAdamW(fresh_model.parameters(), lr=3e-3, ema_decay=0.9,
                          **OPTIMIZER_KINDS[kind])
    assert checkpoint.load_checkpoint(path, fresh_model, fresh) == {"step": 5, "note": "five"}
    for step in range(5, 8):
        _train_step(model, optimizer, step)
        _train_step(fresh_model, fresh, step)
    _assert_same(model.state_dict(), fresh_model.state_dict())
    _assert_same(optimizer.state_dict(), fresh.state_dict())
    with optimizer.swap_ema(), fresh.swap_ema():
        _assert_same(model.state_dict(), fresh_model.state_dict())


def test_save_and_load_of_any_object(tmp_path):
    value = {"ema": {"w": torch.randn(7, 5)}, "n": 3, "names": ["a", None]}
    checkpoint.save(value, tmp_path / "x.pt")
    _assert_same(checkpoint.load(tmp_path / "x.pt"), value)
    assert sorted(os.listdir(tmp_path)) == ["x.pt"]


def _damaged_files(path, rng: random.Random):
    data = path.read_bytes()
    tail = len(data) - 2 - len(b"ascend_ema_adam:sha256:") - 64
    yield "empty", b""
    yield "one byte", data[:1]
    for cut in sorted(rng.sample(range(2, len(data)), 6)) + [tail, len(data) - 1]:
        yield f"truncated to {cut}", data[:cut]
    for where in rng.sample(range(len(data) - 1), 8) + [0, tail - 1, tail + 30, len(data) - 1]:
        flipped = bytearray(data)
        flipped[where] ^= 1 << rng.randrange(8)
        yield f"bit flipped at {where}", bytes(flipped)
    yield "appended", data + b"\0"


def test_truncated_or_corrupted_files_are_refused_and_touch_nothing(tmp_path, seed):
    rng = random.Random(seed)
    good = tmp_path / "good.pt"
    saved_model, saved_optimizer = _trained("fp32", 3, seed=1)
    checkpoint.save_checkpoint(good, saved_model, saved_optimizer, step=3)
    model, optimizer = _trained("fp32", 2, seed=2)
    before = _snapshot(model, optimizer)
    for what, data in _damaged_files(good, rng):
        bad = tmp_path / "bad.pt"
        bad.write_bytes(data)
        with pytest.raises(checkpoint.CheckpointError, match=r"truncated|corrupted") as error:
            checkpoint.load_checkpoint(bad, model, optimizer)
        assert str(bad) in str(error.value), what
        with pytest.raises(checkpoint.CheckpointError):
            checkpoint.load(bad)
        _assert_same(_snapshot(model, optimizer), before)


def test_plain_torch_files_and_foreign_contents_are_refused(tmp_path):
    model, optimizer = _trained("fp32", 1, seed=4)
    before = _snapshot(model, optimizer)
    torch.save({"model": model.state_dict()}, tmp_path / "plain.pt")
    with pytest.raises(checkpoint.CheckpointError, match="not written by"):
        checkpoint.load_checkpoint(tmp_path / "plain.pt", model, optimizer)
    checkpoint.save({"model": model.state_dict()}, tmp_path / "other.pt")
    with pytest.raises(checkpoint.CheckpointError, match="not written by save_checkpoint"):
        checkpoint.load_checkpoint(tmp_path / "other.pt", model, optimizer)
    checkpoint.save_checkpoint(tmp_path / "model_only.pt", model)
    with pytest.raises(checkpoint.CheckpointError, match="holds no optimizer state"):
        checkpoint.load_checkpoint(tmp_path / "model_only.pt", model, optimizer)
    _assert_same(_snapshot(model, optimizer), before)
    with pytest.raises(FileNotFoundError):
        checkpoint.load_checkpoint(tmp_path / "absent.pt", model, optimizer)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        checkpoint.save_checkpoint(tmp_path / "t.pt", model=optimizer)
    with pytest.raises(TypeError, match="optimizer must be a torch.optim.Optimizer"):
        checkpoint.save_checkpoint(tmp_path / "t.pt", optimizer=model)
    assert not (tmp_path / "t.pt").exists()


def test_a_checkpoint_of_another_model_or_optimizer_loads_nothing(tmp_path):
    """torch's load_state_dict copies the entries that fit before raising about the others;
    the optimizer's load comes first and is undone when the model's fails."""
    small_model, small_optimizer = _trained("fp32", 2, seed=5)
    checkpoint.save_checkpoint(tmp_path / "small.pt", small_model, small_optimizer)
    model, optimizer = _trained("fp32", 2, seed=6, width=40)
    before = _snapshot(model, optimizer)
    with pytest.raises(checkpoint.CheckpointError, match=r"does not fit the model.*shapes"):
        checkpoint.load_checkpoint(tmp_path / "small.pt", model, optimizer)
    _assert_same(_snapshot(model, optimizer), before)

    other = torch.nn.Linear(48, 3)  # fewer parameters: the optimizer refuses the groups
    torch_optimizer = torch.optim.AdamW(other.parameters())
    checkpoint.save_checkpoint(tmp_path / "other.pt", small_model, torch_optimizer)
    same_model, same_optimizer = _trained("fp32", 1, seed=5)
    before = _snapshot(same_model, same_optimizer)
    with pytest.raises(ValueError, match="size"):
        checkpoint.load_checkpoint(tmp_path / "other.pt", same_model, same_optimizer)
    _assert_same(_snapshot(same_model, same_optimizer), before)

    class FailingLoad(torch.nn.Sequential):
        def load_state_dict(self, *args, **kwargs):
            raise RuntimeError("the model's load failed")
    failing = FailingLoad(*_model(seed=5))
    restored = FusedEmaAdamW(failing.parameters(), lr=3e-3, ema_decay=0.9)
    _train_step(failing, restored, 0)
    before = _snapshot(failing, restored)
    with pytest.raises(RuntimeError, match="the model's load failed"):
        checkpoint.load_checkpoint(tmp_path / "small.pt", failing, restored)
    _assert_same(_snapshot(failing, restored), before)


def test_atomic_file_keeps_the_old_file_on_an_exception_and_removes_dead_leftovers(tmp_path):
    target = tmp_path / "out.json"
    with atomic_file(target, "w") as file:
        file.write("old")
    with pytest.raises(KeyError):
        with atomic_file(target, "w") as file:
            file.write("half of the new")
            raise KeyError("interrupted")
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["out.json"]

    dead = multiprocessing.get_context("spawn").Process(target=int)
    dead.start()
    dead.join()
    host = os.uname().nodename
    leftover = tmp_path / f".out.json.{host}.{dead.pid}-0.partial"
    alive = tmp_path / f".out.json.{host}.{os.getppid()}-0.partial"
    foreign = tmp_path / f".out.json.other-host.{dead.pid}-0.partial"
    for path in (leftover, alive, foreign):
        path.write_text("half")
    with atomic_file(target, "w") as file:
        file.write("new")
    assert target.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == sorted(["out.json", alive.name, foreign.name])
    with pytest.raises(ValueError, match="mode must be"):
        with atomic_file(target, "a"):
            pass


# --- the kill test ------------------------------------------------------------------------

KILL_WIDTH = 384  # about 0.74 M parameters: a save (12 MB with the optimizer's state) takes a
KILLS = 16        # good part of each loop, so most kills land inside one


def _resume_and_train(path: str, finished, saving) -> None:
    """The child: resume from ``path`` (or start), then step and save until killed; ``finished``
    holds the step of the last save that returned, ``saving`` whether one is under way."""
    torch.set_num_threads(1)
    model = _model(seed=7, width=KILL_WIDTH)
    optimizer = FusedEmaAdamW(model.parameters(), lr=1e-3, ema_decay=0.99)
    step = checkpoint.load_checkpoint(path, model, optimizer)["step"] if os.path.exists(
        path) else 0
    while True:
        _train_step(model, optimizer, step)
        step += 1
        saving.value = 1
        checkpoint.save_checkpoint(path, model, optimizer, step=step)
        saving.value = 0
        finished.value = step


def test_sigkill_during_saves_never_corrupts_the_checkpoint(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "train.pt")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "ascend_ema_adam.checkpoint",
                                    "ascend_ema_adam.optim"])
    torch.set_num_threads(1)
    mid_save, last = 0, 0
    for _ in range(KILLS):
        finished, saving = context.Value("l", last), context.Value("b", 0)
        child = context.Process(target=_resume_and_train, args=(path, finished, saving))
        child.start()
        deadline = time.monotonic() + 60
        while finished.value == last and time.monotonic() < deadline:  # one save at least
            time.sleep(0.005)
        assert finished.value > last, "the child saved nothing in 60 s"
        time.sleep(rng.uniform(0.0, 0.3))
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        assert child.exitcode == -signal.SIGKILL
        mid_save += saving.value
        model = _model(seed=0, width=KILL_WIDTH)
        optimizer = FusedEmaAdamW(model.parameters(), lr=1e-3, ema_decay=0.99)
        step = checkpoint.load_checkpoint(path, model, optimizer)["step"]
        # The last save that returned, or the one killed between its rename and its return.
        assert finished.value <= step <= finished.value + 1
        last = step
    # Most kills landed inside a save (else this test would prove little).
    print(f"{mid_save} of {KILLS} kills landed inside a save, {last} steps")
    assert mid_save >= KILLS // 2, f"{mid_save} of {KILLS} kills landed inside a save"
    leftovers = [name for name in os.listdir(tmp_path) if name.endswith(".partial")]
    assert len(leftovers) <= 1  # the last child's, if killed mid-save: the next save removes it

    reference_model = _model(seed=7, width=KILL_WIDTH)
    reference = FusedEmaAdamW(reference_model.parameters(), lr=1e-3, ema_decay=0.99)
    for step in range(last):
        _train_step(reference_model, reference, step)
    _assert_same(model.state_dict(), reference_model.state_dict())
    _assert_same(optimizer.state_dict(), reference.state_dict())
    checkpoint.save_checkpoint(path, model, optimizer, step=last)
    assert sorted(os.listdir(tmp_path)) == ["train.pt"]
