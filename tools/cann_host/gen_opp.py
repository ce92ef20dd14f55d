#!/usr/bin/env python3
"""Lays out our operator package (a CANN "vendors" opp tree) the way CANN's custom-op template
builds it, for opbase to read at run time:

  <opp>/op_impl/ai_core/tbe/kernel/config/<soc>/binary_info_config.json  (+ <op>.json)
  <opp>/op_impl/ai_core/tbe/kernel/<soc>/<op_dir>/<bin>.json + <bin>.o
  <opp>/op_impl/ai_core/tbe/op_tiling/lib/linux/<arch>/libcust_opmaster_rt2.0.so  (symlink)

CANN's steps (asc-tools customize/cmake/func.cmake, add_kernels_compile) and who runs them here:
  1. ascendc_bin_param_build.py <ops-info.ini> <dir> <soc>: one compile parameter set per dtype
     column of the OpDef (op_build's ops-info) -- CANN's script, run unchanged.
  2. opc (the device compiler) compiles each set, with the kernel entry the template's script names
     (--main_func), into <bin>.o + <bin>.json -- the one step stood in for: the .json carries what
     opc writes for it (supportInfo = the parameter set, the simplifiedKey computed by opc's own
     simplified_key_utils.generate_simplified_key with the template's --simplified_key_mode=0,
     coreType, kernelList), and the .o is a "twin binary": a
     JSON naming the kernel entry and the tiling keys the kernel source dispatches on
     (TILING_KEY_IS(...) in op_kernel/, resolved through the *_tiling_key.h #defines), which is
     the set of keys the device compiler compiles into every binary of that kernel.
  3. insert_simplified_keys.py and ascendc_ops_config.py -p <dir> -s <soc>: CANN's scripts, run
     unchanged; they write binary_info_config.json and <op>.json.

Options: --drop-key K (self-test: a binary without tiling key K, as if the kernel did not
dispatch on it).
"""
import argparse
import glob
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

def load_opc_simplified_key(devkit):
    """CANN's opc module simplified_key_utils, with its logger import satisfied by Python's
    logging (asc_op_compile_base loads the closed libasc_platform.so just for its logger)."""
    log = types.ModuleType("asc_op_compile_base.common.utils.log")
    lg = logging.getLogger("opc")
    for name in ("info", "debug", "error", "warning"):
        setattr(log, name, getattr(lg, name))
    log.warn = lg.warning
    for name in ("asc_op_compile_base", "asc_op_compile_base.common",
                 "asc_op_compile_base.common.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["asc_op_compile_base.common.utils"].log = log
    sys.modules["asc_op_compile_base.common.utils.log"] = log
    sys.path.insert(0, os.path.join(devkit, "tools/build/asc_opc/python/asc_opc_tool"))
    import simplified_key_utils  # noqa: E402
    from constant import OpcOptions  # noqa: E402
    from opc_common import normalize_optional_impl_mode  # noqa: E402
    return simplified_key_utils, OpcOptions, normalize_optional_impl_mode


def tiling_keys(kernel_dir, entry):
    """The integer keys the kernel `entry` dispatches on, collected as CANN's kernel compiler
    collects them: from the TILING_KEY_IS(...) arguments of the preprocessed source (our keys are
    macros, the list op's generated from its dtype table). kernel_dir is the flat op_kernel/ of the
    custom-op project; kernel_operator.h is stood in by one that keeps TILING_KEY_IS visible."""
    with tempfile.TemporaryDirectory() as stub:
        for header in ("kernel_operator.h", "kernel_operator_list_tensor_intf.h"):
            with open(os.path.join(stub, header), "w") as f:
                f.write("#define TILING_KEY_IS(k) AEA_TILING_KEY_IS__(k)\n")
        out = subprocess.run(["g++", "-E", "-P", "-x", "c++", "-std=c++17", "-I", stub, "-I", kernel_dir,
                              os.path.join(kernel_dir, entry + ".cpp")],
                             capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"gen_opp: preprocessing {entry}.cpp failed:\n{out.stderr}")
    keys = sorted({int(k, 0) for k in re.findall(r"AEA_TILING_KEY_IS__\(\s*\(?\s*(\w+)", out.stdout)})
    if not keys:
        raise SystemExit(f"gen_opp: no TILING_KEY_IS in {entry}.cpp or its headers")
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ini-dir", required=True, help="op_build's output (aic-<soc>-ops-info.ini)")
    ap.add_argument("--soc", default="ascend910b")
    ap.add_argument("--opp", required=True, help="the vendor directory to (re)create")
    ap.add_argument("--kernel-dir", required=True, help="op_kernel/")
    ap.add_argument("--tiling-lib", required=True)
    ap.add_argument("--asc-tools", required=True)
    ap.add_argument("--asc-devkit", required=True)
    ap.add_argument("--drop-key", type=int, action="append", default=[])
    ap.add_argument("--arch", default="x86_64", help="the host CPU of the tiling library (aarch64)")
    args = ap.parse_args()

    util = os.path.join(args.asc_tools,
                        "utils/templates/op_project_templates/ascendc/customize/cmake/util")
    skey, OpcOptions, normalize_impl = load_opc_simplified_key(args.asc_devkit)
    shutil.rmtree(args.opp, ignore_errors=True)
    tbe = os.path.join(args.opp, "op_impl/ai_core/tbe")
    params = os.path.normpath(args.opp) + ".build"  # the template's build/op_kernel/binary
    shutil.rmtree(params, ignore_errors=True)
    os.makedirs(params)
    ini = os.path.join(args.ini_dir, f"aic-{args.soc}-ops-info.ini")
    # 1. CANN's parameter sets.
    subprocess.run([sys.executable, os.path.join(util, "ascendc_bin_param_build.py"), ini, params,
                    args.soc], check=True, stdout=subprocess.DEVNULL)
    # 2. What opc writes, per parameter set (the .sh scripts name the kernel entry: --main_func).
    binary = os.path.join(params, "binary", args.soc)
    count = 0
    for path in sorted(glob.glob(os.path.join(params, "*_param.json"))):
        desc = json.load(open(path))
        op_type = desc["op_type"]
        # The opc command line of the template's script for this parameter set.
        script = open(glob.glob(os.path.join(params, f"{op_type}-*.sh"))[0]).read()
        impl_mode = re.search(r"--impl_mode=(\S+)", script).group(1)
        key_mode = int(re.search(r"--simplified_key_mode=(\d+)", script).group(1))
        # The kernel entry (CANN's rule: the op type in snake case), defined by <entry>.cpp of the
        # flat op_kernel/.
        entry = re.search(r"--main_func=(\w+)", script).group(1)
        keys = [k for k in tiling_keys(args.kernel_dir, entry) if k not in args.drop_key]
        out_dir = os.path.join(binary, op_type)  # the template's per-op directory
        os.makedirs(out_dir, exist_ok=True)
        for op in desc["op_list"]:
            # as opc's op_compilation.py prepares op_info from --impl_mode
            compile_args = {OpcOptions.SIMPLE_KEY_MODE: key_mode}
            op_info = {"op_type": op_type, "impl_mode": normalize_impl(impl_mode),
                       "optional_impl_mode_flag": "optional" in impl_mode.split(",")}
            keys_str, mode = skey.generate_simplified_key(compile_args, op, op_info, None, key_mode)
            if not keys_str:
                raise SystemExit(f"gen_opp: opc's simplified_key_utils gave no key for {op}")
            name = op["bin_filename"]
            support = {"inputs": op["inputs"], "outputs": op["outputs"], "attrs": op.get("attrs", []),
                       "opMode": "dynamic", "implMode": "high_performance",
                       "simplifiedKey": keys_str, "simplifiedKeyMode": mode,
                       "optionalInputMode": "gen_placeholder",
                       "dynamicParamMode": "folded_with_desc", "staticKey": name}
            kernel_json = {"binFileName": name, "binFileSuffix": ".o", "kernelName": entry,
                           "coreType": "VectorCore", "magic": "RT_DEV_BINARY_MAGIC_ELF_AIVEC",
                           "opParaSize": 0, "supportInfo": support,
                           "kernelList": [{"tilingKey": k, "kernelType": "AIV", "taskRation": "0:1"}
                                          for k in keys]}
            json.dump(kernel_json, open(os.path.join(out_dir, name + ".json"), "w"), indent=1)
            json.dump({"twinKernel": entry, "tilingKeys": keys},
                      open(os.path.join(out_dir, name + ".o"), "w"))
            count += 1
    # 3. CANN's config scripts.
    subprocess.run([sys.executable, os.path.join(util, "insert_simplified_keys.py"), "-p", binary],
                   check=True)
    config = os.path.join(tbe, "kernel/config", args.soc)
    os.makedirs(config, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(util, "ascendc_ops_config.py"), "-p", binary, "-s",
                    args.soc, "-o", config], check=True, cwd=util)
    shutil.copytree(binary, os.path.join(tbe, "kernel", args.soc))
    lib_dir = os.path.join(tbe, "op_tiling/lib/linux", args.arch)
    os.makedirs(lib_dir)
    os.symlink(os.path.abspath(args.tiling_lib), os.path.join(lib_dir, "libcust_opmaster_rt2.0.so"))
    print(f"gen_opp: {count} kernel binaries (one per OpDef dtype column) for {args.soc}, "
          f"simplified keys by opc's simplified_key_utils, configs by CANN's ascendc_ops_config.py")


if __name__ == "__main__":
    main()
