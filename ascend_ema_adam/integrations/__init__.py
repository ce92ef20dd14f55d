"""Glue for training engines that take FusedEmaAdamW as their inner optimizer.

Each engine is a submodule, imported on demand (the engines are optional dependencies):
``ascend_ema_adam.integrations.megatron`` (megatron-core's DistributedOptimizer, MindSpeed's
route), ``ascend_ema_adam.integrations.deepspeed`` (DeepSpeed ZeRO).
"""
