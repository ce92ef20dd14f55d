"""The EMA schedule's two backends (``ascend_ema_adam/optim/_schedule.py``) against each other
over 240 schedules x 1,334 warm-up counts (320,160 cases), through the entry points a step uses
(0-d tensors, as on the device path): the host value narrowed to fp32 must equal the device
value bit for bit. About 40 s on one core.

With ``AEA_OPTIM_SOURCE=<v0.1.0's optim.py>`` (``git show c9801fc:ascend_ema_adam/optim.py``) it
also compares every host value with v0.1.0's host copy of the formula (float64, exactly) and
every 4th device value with v0.1.0's device copy (fp32 bits).

    .venv/bin/python tools/ema_schedule_sweep/run.py
"""

import importlib.util
import itertools
import os

import numpy as np
import torch

from ascend_ema_adam.optim import _schedule

COUNTS = (list(range(0, 1300)) + [10**4 + i for i in range(30)]
          + [10**5, 10**6 + 7, 2**31 + 3, 2**40 + 1])
CPU = torch.device("cpu")


def schedules():
    for warmup, (inv_gamma, power), floor, after, every, decay in itertools.product(
            ("num_updates", "power", None), ((1.0, 2 / 3), (7.0, 0.75), (0.5, 1.0)),
            (0.0, 0.1, 0.9995), (0, 5), (1, 3), (0.9999, 0.999, 0.5, 1.0)):
        if warmup != "power" and (inv_gamma, power) != (1.0, 2 / 3):
            continue  # the constants matter to the power warm-up only
        yield dict(ema_decay=decay, ema_warmup=warmup, inv_gamma=inv_gamma, power=power,
                   min_ema_decay=floor, ema_update_after_step=after, ema_every=every)


def device_value(group, n, k):
    """Alternately a tensor counter, and a host counter with a tensor decay (a float32 tensor
    holds the decay exactly only when it is an fp32 number: else the counter is the tensor)."""
    exact = float(np.float32(group["ema_decay"])) == group["ema_decay"]
    if k % 2 == 0 or not exact:
        return _schedule._device_decay(group, torch.tensor(n), CPU)
    tensor_decay = dict(group, ema_decay=torch.tensor(group["ema_decay"], dtype=torch.float32))
    return _schedule._device_decay(tensor_decay, n, CPU)


def load_v0_1_0():
    path = os.environ.get("AEA_OPTIM_SOURCE")
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("ascend_ema_adam._optim_v0_1_0", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    old = load_v0_1_0()
    groups = list(schedules())
    cases = 0
    for group in groups:
        host = np.array([_schedule._host_decay(group, n) for n in COUNTS], dtype=np.float32)
        dev = torch.cat([device_value(group, n, k) for k, n in enumerate(COUNTS)]).numpy()
        bad = np.flatnonzero(host.view(np.uint32) != dev.view(np.uint32))
        assert bad.size == 0, (group, [COUNTS[b] for b in bad[:5]])
        if old is not None:
            for k, n in enumerate(COUNTS):
                assert _schedule._host_decay(group, n) == old._host_decay(group, n), (group, n)
                if k % 4 == 0:
                    a = _schedule._device_decay(group, torch.tensor(n), CPU)
                    b = old._device_decay(group, torch.tensor(n), CPU)
                    assert torch.equal(a.view(torch.int32), b.view(torch.int32)), (group, n)
        cases += len(COUNTS)
    print(f"{len(groups)} schedules x {len(COUNTS)} counts = {cases} cases: host == device"
          + (" == v0.1.0" if old is not None else ""))


if __name__ == "__main__":
    main()
