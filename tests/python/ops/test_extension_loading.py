"""How the package loads its torch ops' extension: an NPU build's ``_C`` links libtorch_npu.so,
which only ``import torch_npu`` loads. With torch's backend autoload off the package imports
torch_npu itself, or says in one line what to do. Each case runs in a fresh interpreter whose
import of ``ascend_ema_adam._C`` fails as an NPU build's does until torch_npu is imported."""

import subprocess
import sys
import textwrap

# A finder standing in for the NPU build: ascend_ema_adam._C fails with the dynamic loader's
# message until a module named torch_npu has been imported (the stand-in torch_npu below, or
# none: then its import fails too).
PRELUDE = textwrap.dedent("""
    import importlib.abc, importlib.util, sys
    class EmptyModule(importlib.abc.Loader):
        def create_module(self, spec):
            return None
        def exec_module(self, module):
            pass
    class NpuBuild(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "ascend_ema_adam._C" and "torch_npu" not in sys.modules:
                raise ImportError("libtorch_npu.so: cannot open shared object file: No such "
                                  "file or directory")
            if name == "torch_npu" and STAND_IN:
                return importlib.util.spec_from_loader(name, EmptyModule())
            return None
    sys.meta_path.insert(0, NpuBuild())
""")


def run(stand_in: bool, body: str):
    code = f"STAND_IN = {stand_in}\n{PRELUDE}\n{textwrap.dedent(body)}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_package_imports_torch_npu_itself():
    proc = run(True, """
        from ascend_ema_adam.optim import FusedEmaAdamW
        import torch
        from ascend_ema_adam import ops
        print("torch_npu" in sys.modules,
              hasattr(torch.ops.ascend_ema_adam, "apply_fused_ema_adam_list_"))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]


def test_without_torch_npu_it_says_what_to_do():
    proc = run(False, "import ascend_ema_adam.ops")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ascend_ema_adam was built with its NPU kernel, which "
                           "needs torch_npu: No module named 'torch_npu'. Install the torch_npu "
                           "of this build, or build the package without AEA_TORCH_NPU_ROOT"), last


def test_other_import_errors_are_not_hidden():
    """An import error that is not libtorch_npu's reaches the caller unchanged."""
    proc = run(False, """
        import importlib.abc
        class Broken(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "ascend_ema_adam._C":
                    raise ImportError("libc10.so: undefined symbol: _ZN3c10")
        sys.meta_path.insert(0, Broken())
        import ascend_ema_adam.ops
    """)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "ImportError: libc10.so: undefined symbol: _ZN3c10", last
