"""FusedEmaAdamW as DeepSpeed's offloaded ZeRO optimizer, with its EMA: train, evaluate the EMA
weights, save the EMA model and a checkpoint.

Two ranks on this machine's CPU (gloo):

    DS_ACCELERATOR=cpu torchrun --nproc-per-node 2 examples/deepspeed_zero_offload.py --stage 3

On Ascend, with torch_npu, DeepSpeed picks its ``npu`` accelerator (HCCL) by itself; the
offloaded step runs on the host CPU with this package's CPU kernel.
"""

import argparse

import deepspeed
import torch

from ascend_ema_adam import FusedEmaAdamW
from ascend_ema_adam.integrations import deepspeed as aea_deepspeed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", type=int, default=3, choices=(1, 2, 3))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--out", default="build/deepspeed_example")
    args = parser.parse_args()

    deepspeed.init_distributed()  # gloo on the CPU, HCCL on Ascend
    torch.manual_seed(0)          # the same initial model on every rank
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 4))
    optimizer = FusedEmaAdamW(model.parameters(), lr=1e-3, weight_decay=0.01, ema_decay=0.999)
    config = {"train_micro_batch_size_per_gpu": 16, "gradient_clipping": 1.0,
              "zero_optimization": {"stage": args.stage, "sub_group_size": 1000}}
    # adds zero_force_ds_cpu_optimizer=False, zero_allow_untested_optimizer=True and
    # offload_optimizer={"device": "cpu"}, then deepspeed.initialize and attach(engine)
    engine, *_ = aea_deepspeed.initialize(model, optimizer, config)

    gen = torch.Generator().manual_seed(1 + engine.global_rank)  # each rank its own data
    target = torch.nn.Linear(32, 4)
    for _ in range(args.steps):
        x = torch.randn(16, 32, generator=gen)
        loss = torch.nn.functional.mse_loss(engine(x), target(x).detach())
        engine.backward(loss)
        engine.step()

    x = torch.randn(64, 32, generator=gen)
    with torch.no_grad():
        live = torch.nn.functional.mse_loss(engine(x), target(x)).item()
        with aea_deepspeed.swap_ema(engine):      # the EMA weights, on every rank
            ema = torch.nn.functional.mse_loss(engine(x), target(x)).item()

    first = next(model.parameters())
    full = aea_deepspeed.full_ema(engine, first)  # one parameter's full fp32 EMA
    ema_model = aea_deepspeed.ema_state_dict(engine, rank0_only=True)  # every rank calls it
    engine.save_checkpoint(args.out)              # the EMA travels in the optimizer state
    if engine.global_rank == 0:
        torch.save(ema_model, f"{args.out}/ema_model.pt")
        print(f"ZeRO-{args.stage}: {optimizer.num_updates} engine steps, loss {live:.4f} "
              f"(EMA weights {ema:.4f}); first EMA tensor {list(full.shape)}; "
              f"EMA model saved to {args.out}/ema_model.pt")


if __name__ == "__main__":
    main()
