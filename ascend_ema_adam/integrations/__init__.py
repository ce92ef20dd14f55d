"""Glue for training engines that take FusedEmaAdamW as their inner optimizer, one module per
engine, imported by name (the engines are optional dependencies; importing this package imports
none): ``ascend_ema_adam.integrations.megatron`` (megatron-core's DistributedOptimizer,
MindSpeed's route), ``ascend_ema_adam.integrations.deepspeed`` (DeepSpeed ZeRO, with the
optimizer offloaded to the host CPU)."""
