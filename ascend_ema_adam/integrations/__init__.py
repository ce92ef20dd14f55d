"""FusedEmaAdamW inside distributed training engines, one module per engine, imported by name
(``ascend_ema_adam.integrations.deepspeed``): importing this package imports no engine."""
