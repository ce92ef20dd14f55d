"""The command line (``python -m ascend_ema_adam``, ``ascend-ema-adam``) and its tools: the
golden-compare sweep (:mod:`.check`), the benchmarks (:mod:`.bench`, :mod:`.bench_steps`,
:mod:`.bench_zero`) and the training demo (:mod:`.train_demo`). Nothing of the optimizer or the ops
imports them."""
