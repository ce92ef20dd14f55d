"""Command line: ``python -m ascend_ema_adam <command>`` (also installed as ``ascend-ema-adam``)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ascend_ema_adam",
                                     description="FusedEmaAdam for Ascend: tools")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="golden-compare sweep of the kernel on the CPU twin")
    check.add_argument("--quick", action="store_true", help="fewer sizes (seconds, not minutes)")
    check.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    commands.add_parser("info", help="versions found and which backend runs CPU / NPU tensors")
    args = parser.parse_args(argv)

    if args.command == "check":
        from . import check as check_module
        return check_module.main(quick=args.quick, seed=args.seed)
    if args.command == "info":
        from .info import format_info, info
        print(format_info(info()))
        return 0
    return 2
