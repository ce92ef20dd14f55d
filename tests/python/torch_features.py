"""What the installed torch can do, where the tests depend on it (docs/OPTIMIZER.md, "Older torch
releases"; `make compat` runs the suite on each row of the README's supported-versions table).
Each fact is probed, never read off the version number."""

import torch

# Tensor.grad_dtype (a gradient of another dtype than its leaf's, also from autograd): torch 2.11
# and 2.13 have it, 2.7.1 does not.
HAS_GRAD_DTYPE = hasattr(torch.Tensor, "grad_dtype")


def set_grad(p: torch.Tensor, g: torch.Tensor | None) -> None:
    """``p.grad = g`` where ``g`` may have another dtype than ``p`` (an fp32 gradient of a bf16
    parameter, as Megatron's main_grad): with ``grad_dtype = None`` (any dtype) where torch has
    it; older torch refuses such an assignment but keeps such a gradient, so there the data of a
    gradient of the parameter's dtype is swapped for ``g``'s (``.data``, as older mixed-precision
    code did)."""
    if g is None or g.dtype == p.dtype:
        p.grad = g
    elif HAS_GRAD_DTYPE:
        p.grad_dtype = None
        p.grad = g
    else:
        p.grad = torch.empty_like(p, memory_format=torch.preserve_format).detach()
        p.grad.data = g


def gloo_averages() -> bool:
    """Whether gloo's reduce_scatter_tensor honours ReduceOp.AVG, as FSDP2 asks of it for fp32
    gradients. torch 2.7.1's sums instead (2.11 and 2.13 average): there FSDP2 on CPU ranks
    leaves the sum of the ranks' gradients. Call inside an initialized gloo process group."""
    import torch.distributed as dist

    world = dist.get_world_size()
    out = torch.empty(1)
    dist.reduce_scatter_tensor(out, torch.ones(world), op=dist.ReduceOp.AVG)
    return out.item() == 1.0
