"""Command line: ``python -m ascend_ema_adam <command>`` (also installed as ``ascend-ema-adam``)."""

from __future__ import annotations

import argparse

from .bench_common import BENCH_OUT


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog="python -m ascend_ema_adam",
                                     description="FusedEmaAdam for Ascend: tools")
    parser.add_argument("--version", action="version", version=f"ascend-ema-adam {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="golden-compare sweep of the three operators' "
                                              "kernels on the CPU twin")
    check.add_argument("--quick", action="store_true", help="fewer sizes (seconds, not minutes)")
    check.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    commands.add_parser("info", help="versions found and which backend runs CPU / NPU tensors")
    bench = commands.add_parser("bench", help="CPU benchmark: fused op vs torch / DeepSpeed")
    bench.add_argument("--quick", action="store_true", help="fewer cases and rounds than make bench (minutes, "
                                                             "not an hour)")
    bench.add_argument("--out", default=BENCH_OUT,
                       help=f"directory for bench.json, bench.png (default: ./{BENCH_OUT})")
    bench.add_argument("--threads", type=int, nargs="+", help="thread counts (default: 1, all)")
    bench.add_argument("--repeats", type=int, help="interleaved rounds per case")
    bench.add_argument("--isa", choices=["avx512", "avx2", "generic"],
                       help="instruction set for every implementation, e.g. avx2 on an AVX-512 "
                            "CPU: our kernel (ASCEND_EMA_ADAM_ISA), torch (ATEN_CPU_CAPABILITY) "
                            "and DeepSpeed's CPU Adam (built for it); default: each one's best")
    bench.add_argument("--cases", nargs="+", metavar="NAME",
                       help="only the cases whose name contains one of these (e.g. '1x2^24 float32'; "
                            "'8bit', 'threads': those rows alone)")
    bench.add_argument("--zero-offload", action="store_true",
                       help="instead: a DeepSpeed ZeRO-2 offload engine step of a GPT-2-small-shaped "
                            "model, FusedEmaAdamW vs DeepSpeedCPUAdam + a lerp EMA (needs the "
                            "deepspeed extra and ~8 GB of memory)")
    demo = commands.add_parser("train-demo",
                               help="train a small CNN on sklearn digits with FusedEmaAdamW "
                                    "(needs the demo extra)")
    demo.add_argument("--epochs", type=int, default=15, help="epochs (default: 15)")
    demo.add_argument("--out", default=None,
                      help="PNG of the curves (default: ./ascend-ema-adam-demo/train_demo.png)")
    demo.add_argument("--seed", type=int, default=0, help="data split and init seed")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    if args.command == "check":
        from . import check as check_module
        return check_module.main(quick=args.quick, seed=args.seed)
    if args.command == "bench" and args.zero_offload:
        from . import bench_zero
        return bench_zero.main(repeats=args.repeats, out_dir=args.out, isa=args.isa)
    if args.command == "bench":
        from . import bench as bench_module
        return bench_module.main(quick=args.quick, out_dir=args.out, threads=args.threads,
                                 repeats=args.repeats, isa=args.isa, only=args.cases)
    if args.command == "train-demo":
        from . import train_demo
        return train_demo.main(epochs=args.epochs, out=args.out, seed=args.seed)
    if args.command == "info":
        from ..info import format_info, info
        print(format_info(info()))
        return 0
    return 2
